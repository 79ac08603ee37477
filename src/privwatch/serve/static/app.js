// privwatch serve: follow a running job's progress (the only script; no inline script, no CDN).
"use strict";
(function () {
  function follow(section) {
    var url = section.getAttribute("data-url");
    var bar = document.getElementById("bar");
    var step = document.getElementById("step");
    function tick() {
      fetch(url, { credentials: "same-origin", cache: "no-store" })
        .then(function (r) { return r.json(); })
        .then(function (job) {
          if (job.status !== "queued" && job.status !== "running") {
            window.location.reload();
            return;
          }
          if (job.progress) {
            bar.max = Math.max(job.progress.total, 1);
            bar.value = Math.min(job.progress.step + 1, bar.max);
            step.textContent = job.progress.message;
          }
          window.setTimeout(tick, 400);
        })
        .catch(function () { window.setTimeout(tick, 1000); });
    }
    tick();
  }
  document.addEventListener("DOMContentLoaded", function () {
    var section = document.getElementById("job");
    var status = section && section.getAttribute("data-status");
    if (status === "queued" || status === "running") { follow(section); }
  });
})();
