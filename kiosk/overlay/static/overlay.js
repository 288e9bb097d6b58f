// Overlay pages: subscribe to /overlay/stream (server-side delay; full state on every connect).
// Strings from the one catalogue (static/i18n.json via i18n.js): Chinese by default, ?lang=en.
// /overlay/table?layout=full (the default: seats round the edges, the trick in the middle) or
// ?layout=lower (a lower third); sizes follow the viewport (1920x1080, 1280x720 alike).
(function (g) {
  "use strict";
  var I = g.GDI18N, tr = I.tr, SEATS = ["N", "E", "S", "W"];
  function $(id) { return document.getElementById(id); }
  function esc(s) { return String(s == null ? "" : s).replace(/[&<>"]/g, function (c) { return "&#" + c.charCodeAt(0) + ";"; }); }
  function seatName(s) { return s ? tr("seat." + s) : "?"; }
  function feed(on) {
    var init = window.GD_STATE || {};  // full (delayed) state inlined by the server
    if (init.state && on.state) on.state(init.state);
    if (init.standings && on.standings) on.standings(init.standings);
    var q = new URLSearchParams(location.search), d = q.get("delay");
    var url = "/overlay/stream" + (d !== null ? "?delay=" + encodeURIComponent(d) : "");
    var es = null;
    window.addEventListener("pagehide", function () { if (es) es.close(); });
    function connect() {
      es = new EventSource(url);
      Object.keys(on).forEach(function (k) { es.addEventListener(k, function (ev) { on[k](JSON.parse(ev.data)); }); });
      es.onerror = function () { es.close(); setTimeout(connect, 2000); };
    }
    window.addEventListener("load", function () { setTimeout(connect, 50); });
  }
  function cardPx() {  // card width: a fraction of the viewport, read at a distance
    var u = Math.min(window.innerWidth / 100, window.innerHeight / 56.25);
    return Math.round((document.body.classList.contains("lower") ? 4.4 : 5.6) * u);
  }
  function table() {
    var q = new URLSearchParams(location.search);
    document.body.className = q.get("layout") === "lower" ? "lower" : "full";
    I.apply();
    var state = null, stamp = 0;
    function clock() {
      var el = $("clock"), c = state && state.shot_clock;
      if (!c || state.match_over) { el.textContent = ""; return; }
      var now = state.now_t + (performance.now() - stamp) / 1000 * (state.rate || 1);
      var left = Math.round(c.limit - (now - c.since));
      el.textContent = seatName(c.seat) + " " + (left >= 0 ? tr("ui.clock", { s: left }) : tr("ui.overtime", { s: -left }));
      el.classList.toggle("late", left < 0);
    }
    setInterval(clock, 250);
    feed({ state: function (st) {
      state = st; stamp = performance.now();
      var d = st.deal, names = st.seating || {}, limit = st.foul_limit || 3;
      $("table").textContent = st.table;
      ["NS", "EW"].forEach(function (t) {
        $("lv" + t).textContent = st.levels[t];
        var pair = [names[t.charAt(0)], names[t.charAt(1)]].filter(Boolean);
        $("names" + t).textContent = pair.join(" · ");
        $("tf" + t).textContent = tr("ui.teamFouls", { n: (st.team_fouls || {})[t] || 0, limit: limit });
      });
      $("dealtxt").textContent = st.deal_no ? tr("ui.deal_n", { n: st.deal_no }) + " · " + tr("ui.level") + " " + (d ? d.level : "-") : "";
      SEATS.forEach(function (s) {
        var c = d ? d.counts[s] : 27, pl = d ? d.order.indexOf(s) + 1 : 0;
        var live = d && !d.over && !st.match_over, turn = live && d.turn === s;
        var rep = live && pl === 0 && c > 0 && c <= st.report_threshold;
        var h = '<div class="who"><span class="sid">' + esc(seatName(s)) + '</span> <span class="n">' + esc(names[s] || "") + "</span></div>";
        h += pl ? '<div class="pl">' + esc(tr("place." + pl)) + "</div>" : '<div class="c' + (rep ? " rep" : "") + '">' + esc(tr("ui.cardsLeft", { n: c })) + "</div>";
        var el = $("s-" + s);
        el.innerHTML = h;
        el.classList.toggle("turn", !!turn);
        el.classList.toggle("out", pl > 0);
      });
      var cw = cardPx();
      if (d && d.trick && !d.over) {
        $("trickhead").textContent = seatName(d.owner) + " · " + tr("kind." + (d.trick.kind || "unknown"));
        $("trick").innerHTML = cardsHTML(d.trick.cards, cw);
      } else {
        $("trickhead").textContent = d && !d.over && d.turn ? tr("ui.leads", { seat: seatName(d.turn) }) : "";
        $("trick").innerHTML = "";
      }
      var order = d ? d.order : [];
      var ord = order.map(function (s, i) { return tr("place." + (i + 1)) + " " + seatName(s) + (names[s] ? " " + names[s] : ""); }).join(" · ");
      if (st.match_over && st.last_match) {
        var w = st.last_match.winner, who = w ? tr("team." + w) : tr("ui.draw");
        if (w && (names[w.charAt(0)] || names[w.charAt(1)])) who += " " + [names[w.charAt(0)], names[w.charAt(1)]].filter(Boolean).join(" · ");
        ord = tr("ui.matchOver", { winner: who });
      }
      $("order").textContent = ord;
      // a foul on a camera reading waits for the referee's mark: not on air until then
      $("fouls").textContent = (st.fouls || []).filter(function (f) { return f.type === "foul" && !f.review; }).slice(-2).map(function (f) {
        return tr("ov.foul") + " " + seatName(f.seat) + " " + tr("foul." + f.kind);
      }).join(" · ");
      clock();
    } });
  }
  function ticker() {
    I.apply();
    var live = "", rows = "";
    function draw() {
      // a seamless loop: the items (repeated while they are narrower than the screen, so the
      // line is never empty) twice over, scrolled by half
      var track = $("track"), one = live + rows, block = one, n = 1;
      track.innerHTML = one || "—";
      while (one && track.scrollWidth < window.innerWidth && n < 30) { n++; block += one; track.innerHTML = block; }
      if (one) track.innerHTML = block + block;
      track.style.animationDuration = Math.max(15, Math.round(track.scrollWidth / 2 / 100)) + "s";
    }
    feed({
      state: function (st) {  // this table, live (with the overlay's delay)
        var d = st.deal;
        live = '<span class="it live"><b>' + esc(tr("ui.table")) + " " + esc(st.table) + "</b> " +
          esc(tr("team.NS")) + " " + esc(st.levels.NS) + " · " + esc(tr("team.EW")) + " " + esc(st.levels.EW) +
          (st.deal_no ? " · " + esc(tr("ui.deal_n", { n: st.deal_no })) : "") +
          (st.match_over && st.last_match ? " · " + esc(tr("ui.matchOver", { winner: st.last_match.winner ? tr("team." + st.last_match.winner) : tr("ui.draw") })) : "") +
          (d && d.order.length ? " · " + d.order.map(function (s, i) { return tr("place." + (i + 1)) + " " + tr("seat." + s); }).map(esc).join(" ") : "") +
          "</span>";
        draw();
      },
      standings: function (data) {
        var names = data.names || {};
        rows = '<span class="it"><b>' + esc(tr("ov.standings")) + "</b></span>" + (data.standings || []).map(function (r, i) {
          var who = r.name || names[String(r.pair)] || names[String(r.number)] || ("#" + (r.pair || r.number || i + 1));
          return '<span class="it"><b>' + (r.rank || i + 1) + ".</b> " + esc(who) + " · " + esc(tr("ov.pts", { n: r.points })) + "</span>";
        }).join("");
        draw();
      }
    });
  }
  g.GDOverlay = { table: table, ticker: ticker };
})(window);
