// Overlay pages: subscribe to /overlay/stream (server-side delay; full state on every connect).
(function (g) {
  "use strict";
  var NAME = { N: "北 N", E: "东 E", S: "南 S", W: "西 W" };
  var PLACE = ["", "上游 1st", "二游 2nd", "三游 3rd", "下游 4th"];
  function $(id) { return document.getElementById(id); }
  function esc(s) { return String(s == null ? "" : s).replace(/[&<>"]/g, function (c) { return "&#" + c.charCodeAt(0) + ";"; }); }
  function feed(on) {
    var init = window.GD_STATE || {};  // full (delayed) state inlined by the server
    if (init.state && on.state) on.state(init.state);
    if (init.standings && on.standings) on.standings(init.standings);
    var q = new URLSearchParams(location.search), d = q.get("delay");
    var url = "/overlay/stream" + (d !== null ? "?delay=" + encodeURIComponent(d) : "");
    function connect() {
      var es = new EventSource(url);
      Object.keys(on).forEach(function (k) { es.addEventListener(k, function (ev) { on[k](JSON.parse(ev.data)); }); });
      es.onerror = function () { es.close(); setTimeout(connect, 2000); };
    }
    window.addEventListener("load", function () { setTimeout(connect, 50); });
  }
  function table() {
    feed({ state: function (st) {
      var d = st.deal;
      $("table").textContent = st.table; $("lvNS").textContent = st.levels.NS; $("lvEW").textContent = st.levels.EW;
      $("deal").textContent = st.deal_no || "-"; $("dlv").textContent = d ? d.level : "-";
      $("seats").innerHTML = ["N", "E", "S", "W"].map(function (s) {
        var c = d ? d.counts[s] : 27, pl = d ? d.order.indexOf(s) + 1 : 0, rep = d && c > 0 && c <= st.report_threshold;
        var turn = d && !d.over && d.turn === s && !st.match_over;
        return '<div class="s' + (turn ? " turn" : "") + '"><div>' + NAME[s] + '</div><div class="n">' + esc((st.seating || {})[s] || "") +
          '</div><div class="c' + (rep ? " rep" : "") + '">' + c + '</div><div class="pl">' + (pl ? PLACE[pl] : "") + "</div></div>";
      }).join("");
      $("plays").innerHTML = (st.plays || []).slice(-4).map(function (p) {
        return '<div class="row"><b>' + NAME[p.seat] + "</b> " + (p.type === "pass" ? "<i>不要 pass</i>" : cardsHTML(p.cards, 30)) + "</div>";
      }).join("");
      var order = d ? d.order : [];
      $("order").innerHTML = order.length ? "出完 Order: " + order.map(function (s, i) { return PLACE[i + 1] + " " + NAME[s]; }).join(" · ") : "";
      if (st.match_over && st.last_match) $("order").innerHTML = "比赛结束 Match over · 胜 Winner: <b>" + esc(st.last_match.winner || "draw") + "</b>";
      // a foul on a camera reading waits for the referee's mark: not on air until then
      $("fouls").innerHTML = (st.fouls || []).filter(function (f) { return f.type === "foul" && !f.review; }).slice(-3).map(function (f) {
        return "犯规 Foul " + esc(f.seat || "?") + " " + esc(f.kind);
      }).join(" · ");
    } });
  }
  function ticker() {
    feed({ standings: function (data) {
      var names = data.names || {};
      var items = (data.standings || []).map(function (r, i) {
        var who = r.name || names[String(r.pair)] || names[String(r.number)] || ("#" + (r.pair || r.number || i + 1));
        return '<span class="it"><b>' + (r.rank || i + 1) + ".</b> " + esc(who) + " · " + esc(r.points) + " pts</span>";
      });
      $("track").innerHTML = items.length ? items.join("") : "排名 Standings: —";
    } });
  }
  g.GDOverlay = { table: table, ticker: ticker };
})(window);
