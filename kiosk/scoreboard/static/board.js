// The public board, live: every event on the scoreboard's stream (a table's event, a standings
// change, a reconnect's snapshot) asks the server for the board's sections again, rendered as the
// page was (/scoreboard/{id}/parts?lang=..), at most once a second; every 15 s anyway (a new
// round, a closed one, a clock). Texts come from the catalogue the page inlines (SB_I18N).
(function () {
  "use strict";
  var B = window.SB_BOARD, T = window.SB_I18N || {};
  function tr(key, params) {
    var s = T[key];
    if (typeof s !== "string") {
      var html = document.documentElement, had = (html.getAttribute("data-i18n-missing") || "").split(" ");
      if (had.indexOf(key) < 0) html.setAttribute("data-i18n-missing", had.concat([key]).join(" ").trim());
      return key;
    }
    return s.replace(/\{(\w+)\}/g, function (_m, k) { return params && params[k] != null ? String(params[k]) : ""; });
  }
  function mmss(x) { x = Math.max(0, Math.floor(x)); return Math.floor(x / 60) + ":" + ("0" + x % 60).slice(-2); }
  var live = document.getElementById("live");
  function status(key) { live.textContent = tr(key, {}); live.dataset.state = key; }
  var SECTIONS = { standings: "standings-box", tables: "tables", disputes: "disputes", rounds: "rounds", clocks: "clocks", bracket: "bracket", groups: "groups" };
  var anchor = Date.now(), busy = false, again = false, last = 0, timer = null;
  function refresh() {
    if (busy) { again = true; return; }
    busy = true; last = Date.now();
    fetch("/scoreboard/" + B.tid + "/parts?lang=" + B.lang, { cache: "no-store" })
      .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
      .then(function (d) {
        Object.keys(SECTIONS).forEach(function (k) {
          var el = document.getElementById(SECTIONS[k]);
          if (el && typeof d.parts[k] === "string" && el.innerHTML !== d.parts[k]) el.innerHTML = d.parts[k];
        });
        if (d.missing && d.missing.length) d.missing.forEach(function (k) { tr(k); });
        anchor = Date.now();
        document.body.dataset.refreshed = String((Number(document.body.dataset.refreshed) || 0) + 1);
      })
      .catch(function () { status("board.reconnecting"); })
      .then(function () { busy = false; if (again) { again = false; schedule(); } });
  }
  function schedule() {
    if (timer) return;
    var wait = Math.max(0, 1000 - (Date.now() - last));
    timer = setTimeout(function () { timer = null; refresh(); }, wait);
  }
  // the round clocks tick between two refreshes
  setInterval(function () {
    document.querySelectorAll(".clock").forEach(function (b) {
      if (b.dataset.state !== "running" || b.dataset.remaining === "") return;
      var left = parseFloat(b.dataset.remaining) - (Date.now() - anchor) / 1000;
      var el = b.querySelector(".clock-left");
      if (el) el.textContent = tr("clock.left", { time: mmss(left), m: b.dataset.limit });
    });
  }, 1000);
  setInterval(schedule, 15000);
  if (!window.EventSource) { status("board.reconnecting"); return; }
  var es = new EventSource("/api/v1/stream?tournament=" + B.tid);
  ["snapshot", "table", "standings"].forEach(function (name) {
    es.addEventListener(name, function () { status("board.live"); schedule(); });
  });
  es.onerror = function () { status("board.reconnecting"); };
})();
