from privwatch.cli import main

main()
