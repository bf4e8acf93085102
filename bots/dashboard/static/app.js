// factbot dashboard: small enhancements over server-rendered pages (everything reads without it).
(function () {
  "use strict";

  // Times: the server writes UTC; show them in the viewer's zone.
  function localTimes(root) {
    root.querySelectorAll("time[datetime]").forEach(function (el) {
      var d = new Date(el.getAttribute("datetime"));
      if (!isNaN(d)) {
        el.textContent = d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
        el.title = el.getAttribute("datetime");
      }
    });
  }

  // Try it: follow the job's server-sent events, then open the check.
  function followProgress() {
    var box = document.getElementById("progress");
    if (!box || !window.EventSource) return;
    var list = document.getElementById("stages");
    var status = document.getElementById("job-status");
    var source = new EventSource(box.dataset.events);
    function line(stage) {
      var li = list.querySelector('li[data-stage="' + CSS.escape(stage) + '"]');
      if (!li) {
        li = document.createElement("li");
        li.dataset.stage = stage;
        list.appendChild(li);
      }
      return li;
    }
    source.addEventListener("stage", function (e) {
      var data = JSON.parse(e.data);
      var text = data.stage + ": " + data.status;
      if (typeof data.seconds === "number") text += " (" + data.seconds.toFixed(2) + " s)";
      line(data.stage).textContent = text;
    });
    source.addEventListener("job", function (e) {
      status.textContent = JSON.parse(e.data).status;
    });
    source.addEventListener("end", function (e) {
      source.close();
      var data = JSON.parse(e.data);
      status.textContent = data.status;
      if (data.status === "done" && data.check_id) {
        var link = document.getElementById("done-link");
        link.href = "/check/" + encodeURIComponent(data.check_id);
        document.getElementById("done").hidden = false;
        window.location.assign(link.href);
      } else if (data.error) {
        status.textContent = data.status + " — " + data.error;
      }
    });
  }

  // Overview: draw the figures with Chart.js when it is loaded.
  function charts() {
    var box = document.getElementById("charts");
    if (!box || !window.Chart) return;
    var dark = window.matchMedia("(prefers-color-scheme: dark)").matches;
    Chart.defaults.color = dark ? "#d8d8dc" : "#1d1d1f";
    Chart.defaults.borderColor = dark ? "#3a3a40" : "#dcdce0";
    if (window.matchMedia("(prefers-reduced-motion: reduce)").matches) Chart.defaults.animation = false;
    var palette = ["#c62828", "#ef6c00", "#2e7d32", "#1565c0", "#6a1b9a", "#00838f", "#5d4037"];
    fetch(box.dataset.source, { credentials: "same-origin" })
      .then(function (r) { return r.json(); })
      .then(function (f) {
        new Chart(document.getElementById("chart-per-day"), {
          type: "bar",
          data: {
            labels: f.days,
            datasets: f.verdicts.map(function (v, i) {
              return { label: v, backgroundColor: palette[i % palette.length],
                data: f.days.map(function (d) { return f.checks_per_day[d][v] || 0; }) };
            }),
          },
          options: { scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true } } },
        });
        new Chart(document.getElementById("chart-latency"), {
          type: "bar",
          data: {
            labels: f.latency.map(function (s) { return s.stage; }),
            datasets: [
              { label: "p50 s", backgroundColor: palette[3], data: f.latency.map(function (s) { return s.p50; }) },
              { label: "p95 s", backgroundColor: palette[1], data: f.latency.map(function (s) { return s.p95; }) },
            ],
          },
          options: { indexAxis: "y" },
        });
        var days = Object.keys(f.cost_per_day);
        new Chart(document.getElementById("chart-cost"), {
          type: "line",
          data: { labels: days, datasets: [{ label: "USD", borderColor: palette[4],
            data: days.map(function (d) { return f.cost_per_day[d]; }) }] },
          options: { scales: { y: { beginAtZero: true } } },
        });
      });
  }

  function start() {
    localTimes(document);
    followProgress();
    charts();
    document.body.addEventListener("htmx:afterSwap", function (e) { localTimes(e.target); });
  }
  // Deferred scripts (Chart.js on the overview) have all run when DOMContentLoaded fires.
  document.addEventListener("DOMContentLoaded", start);
})();
