import pstats, sys
names = [("decide", "_route_engine.py", "decide"), ("tradeoff (propose_epsilon)", "_tradeoff.py", "tradeoff"),
 ("find_release", "_find_release.py", "find_release"), ("count_space", "_counting.py", "count_space"),
 ("searches (Fitter.fit)", "_one_search.py", "fit"), ("local recoding", "_local_recoding.py", "refine_locally"),
 ("global recoding", "_global_recoding.py", "search_global"),
 ("held-out checks (estimate_breach)", "_breach.py", "estimate_breach"), ("tuple model fits", "_model.py", "_fit_value"),
 ("replicates", "_evaluation.py", "replicates"), ("Beta CDFs (beta_outside)", "_evaluation.py", "beta_outside"),
 ("_codes", "_route_engine.py", "_codes"), ("reidentification", "_route_engine.py", "_reidentification"),
 ("prior distinct", "_prior.py", "distinct")]
for path in sys.argv[1:]:
    st = pstats.Stats(path).stats
    out = []
    for label, f, fn in names:
        t = sum(v[3] for k, v in st.items() if k[0].endswith(f) and k[2] == fn)
        out.append(f"{label}: {t:.2f}")
    print(path, " | ".join(out))
