// The table screen: renders the kiosk's state (SSE /api/stream, full state on every message).
// Strings: static/i18n.json through GDI18N (i18n.js). Passes go out only from a paired screen
// (X-Table-Pairing) or in referee mode; the kiosk's own screen gets its pairing with the page.
(function () {
  "use strict";
  var I = window.GDI18N, tr = I.tr;
  var SEATS = ["N", "E", "S", "W"];
  var FOULS = ["exposed_card", "out_of_turn", "card_count", "slow_play", "illegal_play", "wrong_tribute", "duplicate_card"];
  var state = null, rate = 1, stamp = 0;
  var token = sessionStorage.getItem("gd-ref") || null;   // referee session
  var P = window.GD_PAIRING || {};                          // {local, token} from the server
  var pairTok = P.token || localStorage.getItem("gd-pair") || null;
  var pairedAs = P.token ? "local" : null;                  // checked with GET /api/pairing below
  if (P.token) localStorage.setItem("gd-pair", P.token);
  function $(id) { return document.getElementById(id); }
  function esc(s) { return String(s == null ? "" : s).replace(/[&<>"]/g, function (c) { return "&#" + c.charCodeAt(0) + ";"; }); }
  function seatName(s) { return s ? tr("seat." + s) : "?"; }
  function kindName(k) { return tr("kind." + (k || "unknown")); }
  function foulName(k) { return tr("foul." + k); }  // a kind without a text: marked missing
  function penaltyText(p) {
    if (!p) return "";
    var base = String(p).split(";")[0].trim(), out = [];
    if (/^taken back/.test(p)) { out.push(tr("pen.taken_back")); base = String(p).split(";")[1] ? String(p).split(";")[1].trim() : ""; }
    var map = { "loses the trick": "pen.lose_trick", "foul only": "pen.foul_only", "hand void (treated as last)": "pen.void",
      "foul": "pen.foul", "review: probable misread, not counted": "pen.misread" };
    if (map[base]) out.push(tr(map[base]));
    return out.join("，");
  }
  function canPress() { return !!(pairedAs || token); }

  // ------------------------------------------------------------------ the table
  function seatHTML(s, st) {
    var d = st.deal, name = (st.seating || {})[s] || "";
    var cnt = d ? d.counts[s] : 27, place = d ? d.order.indexOf(s) + 1 : 0;
    var live = !!(d && !d.over && !st.match_over);
    var turn = live && d.turn === s;
    var rep = live && place === 0 && cnt > 0 && cnt <= st.report_threshold;
    var h = '<div class="who"><span class="sid">' + esc(seatName(s)) + '</span><span class="name">' + esc(name) + "</span></div>";
    if (place > 0) {
      // out: the place, and (the deal over) the cards the last two still held - never a count to play
      h += '<div class="place">' + esc(tr("place." + place)) + "</div>";
      h += '<div class="sub">' + (cnt > 0 ? esc(tr("ui.stillHeld", { n: cnt })) : "") + "</div>";
    } else {
      h += '<div class="count' + (rep ? " report" : "") + '">' + esc(tr("ui.cardsLeft", { n: cnt })) + "</div>";
      var sub = rep ? '<span class="badge">' + esc(tr("ui.report", { n: cnt })) + "</span>" : "";
      if (live && d.barred && d.barred.indexOf(s) >= 0) sub += '<span class="badge dim">' + esc(tr("ui.barred")) + "</span>";
      if (turn) sub += '<span class="onturn">' + esc(tr(d.trick ? "ui.onTurn" : "ui.leadTurn")) + "</span>";
      h += '<div class="sub">' + sub + "</div>";
    }
    h += '<div class="clock" id="clock-' + s + '"></div>';
    var passable = turn && d.trick && d.owner !== s && canPress();
    h += passable ? '<button class="pass" data-pass="' + s + '">' + esc(tr("ui.pass")) + "</button>" : '<div class="passslot"></div>';
    return h;
  }
  function tributeHTML(st) {
    var tb = st.tribute || {}, rows = [];
    (tb.events || []).forEach(function (e) {
      if (e.type === "anti_tribute") rows.push('<div class="tb">' + esc(tr("trib.anti", { seats: (e.seats || []).map(seatName).join(" ") })) + "</div>");
      else rows.push('<div class="tb">' + esc(tr(e.type === "tribute" ? "trib.paid" : "trib.returned", { from: seatName(e.from), to: seatName(e.to) })) +
        " " + cardsHTML([e.card], 34) + "</div>");
    });
    (tb.events || []).forEach(function (e) {  // paid, not yet returned: the receiver owes a card
      if (e.type === "tribute" && !(tb.events || []).some(function (r) { return r.type === "tribute_returned" && r.from === e.to; }))
        rows.push('<div class="tb wait">' + esc(tr("trib.waitReturn", { seat: seatName(e.to) })) + "</div>");
    });
    var pend = tb.pending;
    if (pend) {
      rows.unshift('<div class="tbh">' + esc(tr(pend.kind === "double" ? "trib.double" : "trib.single")) + "</div>");
      pend.payers.forEach(function (s) {
        if (pend.paid[s]) rows.push('<div class="tb">' + esc(tr("trib.paid", { from: seatName(s), to: "" })) + " " + cardsHTML([pend.paid[s]], 34) + "</div>");
        else rows.push('<div class="tb wait">' + esc(tr("trib.waiting", { seat: seatName(s) })) + "</div>");
      });
    }
    if ((tb.missing || []).length) rows.push('<div class="tb warn">' + esc(tr("trib.missing", { seats: tb.missing.map(seatName).join(" ") })) + "</div>");
    return rows.join("");
  }
  function render(st) {
    state = st; stamp = performance.now(); rate = st.rate || 1;
    var d = st.deal, limit = st.foul_limit || 3;
    $("table").textContent = st.table; $("profile").textContent = st.profile_title || st.profile;
    $("lvNS").textContent = st.levels.NS; $("lvEW").textContent = st.levels.EW;
    ["NS", "EW"].forEach(function (t) {
      var n = (st.team_fouls || {})[t] || 0, el = $("fouls" + t);
      el.textContent = tr("ui.teamFouls", { n: n, limit: limit });
      el.classList.toggle("hot", n > 0 && n >= limit - 1);
    });
    $("dealno").textContent = st.deal_no || "-"; $("deallv").textContent = d ? (d.level || "-") : "-";
    SEATS.forEach(function (s) {
      var el = $("seat-" + s); el.innerHTML = seatHTML(s, st);
      el.classList.toggle("turn", !!(d && !d.over && d.turn === s && !st.match_over));
      el.classList.toggle("out", !!(d && d.order.indexOf(s) >= 0));
    });
    var pending = st.tribute && st.tribute.pending;
    if (d && d.trick && !d.over) {
      $("trickhead").textContent = tr("ui.trickBy", { seat: seatName(d.owner), kind: kindName(d.trick.kind) });
      $("trick").innerHTML = cardsHTML(d.trick.cards, window.innerWidth < 600 ? 36 : (window.innerHeight < 800 ? 48 : 56));
    } else {
      // during a tribute the tribute panel below says what the table waits for
      $("trickhead").textContent = pending ? "" : (d && !d.over ? (d.turn ? tr("ui.leads", { seat: seatName(d.turn) }) : "") : (d ? "" : tr("ui.waiting")));
      $("trick").innerHTML = "";
    }
    var started = d && !d.over && (st.plays || []).length === 0;
    $("tribute").innerHTML = pending || started || (d && !d.over && (st.plays || []).length < 2) ? tributeHTML(st) : "";
    var res = "";
    if (st.match_over && st.last_match) {
      var wn = st.last_match.winner;
      res = tr("ui.matchOver", { winner: wn ? tr("team." + wn) + ((st.seating || {})[wn.charAt(0)] ? " (" + st.seating[wn.charAt(0)] + " · " + (st.seating[wn.charAt(1)] || "") + ")" : "") : tr("ui.draw") });
    } else if (d && d.over && st.last_deal && !pending) res = tr("ui.dealOver", { order: st.last_deal.order.map(seatName).join(" ") });
    $("result").textContent = res;
    $("order").innerHTML = (d ? d.order : []).map(function (s, i) {
      return "<li>" + esc(tr("place." + (i + 1))) + " " + esc(seatName(s)) + " " + esc((st.seating || {})[s] || "") + "</li>";
    }).join("");
    $("plays").innerHTML = (st.plays || []).slice(-6).reverse().map(function (p) {
      var body = p.type === "pass" ? "<i>" + esc(tr("ui.passed")) + "</i>" : cardsHTML(p.cards, 24);
      if (p.reread) body += ' <span class="reread" title="' + esc(p.reread) + '">↺ ' + esc(tr("ui.reread")) + "</span>";
      return '<div class="p' + (p.legal ? "" : " illegal") + '"><b>' + esc(seatName(p.seat)) + "</b> " + body + "</div>";
    }).join("");
    $("fouls").innerHTML = (st.fouls || []).slice().reverse().map(function (f) {
      var detail = I.lang() === "en" && f.detail ? " — " + esc(f.detail) : "";
      var pen = penaltyText(f.penalty);
      return "<li><b>" + esc(seatName(f.seat)) + "</b> " + esc(foulName(f.kind)) + (f.type === "warning" ? " (" + esc(tr("ui.warning")) + ")" : "") +
        (pen ? " · " + esc(pen) : "") + detail + (f.review ? ' <span class="review">(' + esc(tr("ui.review")) + ")</span>" : "") + "</li>";
    }).join("");
    $("alarms").innerHTML = (st.alarms || []).map(function (a) {
      return '<div class="alarm" data-kind="' + esc(a.kind) + '">⚠ ' + esc(I.lang() === "zh" ? a.zh : a.en) + "</div>";
    }).join("");
    $("unpaired").hidden = canPress();
    var ob = st.outbox, parts = [st.recording ? tr("st.recording") : tr("st.stopped"), tr("st.seq", { n: st.seq })];
    if (ob) {
      parts.push(tr("st.sent", { n: ob.sent }), tr("st.pending", { n: ob.pending }), tr("st.local", { n: ob.local }));
      if (!ob.connected) parts.push(tr("st.offline"));
    }
    var src = st.source || {};
    parts.push(I.has("src." + src.kind) ? tr("src." + src.kind) : (src.kind || ""));
    if (src.done) parts.push(tr("st.sourceDone"));
    $("status").textContent = parts.join(" · ");
    if (token) renderRef(st);
    tick();
  }
  function tick() {
    if (!state) return;
    var c = state.shot_clock;
    SEATS.forEach(function (s) { var el = $("clock-" + s); if (el) el.textContent = ""; });
    if (!c) return;
    var now = state.now_t + (performance.now() - stamp) / 1000 * rate;
    var left = Math.round(c.limit - (now - c.since));
    var el = $("clock-" + c.seat);
    if (el) { el.textContent = left >= 0 ? tr("ui.clock", { s: left }) : tr("ui.overtime", { s: -left }); el.classList.toggle("late", left < 0); }
  }
  setInterval(tick, 250);

  // ------------------------------------------------------------------ talking to the kiosk
  function api(path, body, method) {
    var h = { "Content-Type": "application/json" };
    if (token) h["X-Referee-Token"] = token;
    if (pairTok) h["X-Table-Pairing"] = pairTok;
    var init = { method: method || "POST", headers: h };
    if ((method || "POST") === "POST") init.body = JSON.stringify(body || {});
    return fetch(path, init).then(function (r) {
      return r.json().then(function (j) { return { status: r.status, body: j }; }, function () { return { status: r.status, body: {} }; });
    }, function () { return { status: 0, body: { detail: tr("err.network", null, "en"), detail_zh: tr("err.network", null, "zh"), code: "err.network" } }; });
  }
  function localPairing() {  // the kiosk's own screen: fetch the pairing of this run of the kiosk
    return api("/api/pairing/local", {}).then(function (r) {
      if (r.status === 200) { pairTok = r.body.token; pairedAs = "local"; localStorage.setItem("gd-pair", pairTok); }
      return r.status === 200;
    });
  }
  function checkPairing() {
    return api("/api/pairing", null, "GET").then(function (r) {
      if (r.status !== 200) return;
      pairedAs = r.body.paired || null;
      if (!pairedAs && r.body.local) return localPairing().then(function () { if (state) render(state); });
      if (!pairedAs && pairTok) { pairTok = null; localStorage.removeItem("gd-pair"); }
      if (state) render(state);
    });
  }
  function flash(text) {
    var el = $("flash");
    if (!el) { el = document.createElement("div"); el.id = "flash"; el.setAttribute("role", "alert"); document.body.appendChild(el); }
    el.textContent = text; el.hidden = false;
    clearTimeout(flash.t); flash.t = setTimeout(function () { el.hidden = true; }, 6000);
  }
  function pass(seat, retried) {
    api("/api/seat/" + seat + "/pass").then(function (r) {
      if (r.status === 403 && !retried && P.local) { localPairing().then(function (ok) { if (ok) pass(seat, true); }); return; }
      if (r.status === 403) { pairedAs = null; if (state) render(state); }
      if (r.status !== 200) flash(I.error(r.body, r.status));
    });
  }
  document.addEventListener("click", function (e) {
    var b = e.target.closest("button"); if (!b) return;
    if (b.dataset.pass) pass(b.dataset.pass);
    if (b.dataset.act) refAct(b.dataset.act, b.dataset.id, b.dataset.seat);
    if (b.dataset.unpair) api("/api/referee/unpair", { id: b.dataset.unpair }).then(function (r) { msg(r); loadPairings(); });
    if (b.classList.contains("closeref")) $("refpanel").hidden = true;
    if (b.dataset.card) toggleCard(b);
  });
  $("lang").onclick = function () { I.setLang(I.lang() === "zh" ? "en" : "zh"); fillSelects(); if (state) render(state); };

  // ------------------------------------------------------------------ referee mode
  function fillSelects() {
    $("dealleader").innerHTML = '<option value="">' + esc(tr("ref.unknown")) + "</option>" +
      SEATS.map(function (s) { return '<option value="' + s + '">' + esc(seatName(s)) + "</option>"; }).join("");
    var seatOpts = SEATS.map(function (s) { return '<option value="' + s + '">' + esc(seatName(s)) + "</option>"; }).join("");
    var keep = [$("foulseat").value, $("corrseat").value, $("foulkind").value];
    $("foulseat").innerHTML = seatOpts; $("corrseat").innerHTML = seatOpts;
    $("foulkind").innerHTML = FOULS.map(function (k) { return '<option value="' + k + '">' + esc(foulName(k)) + "</option>"; }).join("");
    if (keep[0]) $("foulseat").value = keep[0];
    if (keep[1]) $("corrseat").value = keep[1];
    if (keep[2]) $("foulkind").value = keep[2];
    var keepOrder = [1, 2, 3, 4].map(function (i) { return $("place" + i) ? $("place" + i).value : SEATS[i - 1]; });
    $("dealorder").innerHTML = [1, 2, 3, 4].map(function (i) {
      return "<label>" + esc(tr("place." + i)) + ' <select id="place' + i + '">' + seatOpts + "</select></label>";
    }).join(" ");
    [1, 2, 3, 4].forEach(function (i) { $("place" + i).value = keepOrder[i - 1]; });
    var names = (state && state.seating) || {};
    if (!$("sN")) {
      $("seatrow").innerHTML = SEATS.map(function (s) {
        return '<label>' + '<span class="seatlab" data-seatlab="' + s + '"></span> <input id="s' + s + '" size="10"></label>';
      }).join(" ");
      SEATS.forEach(function (s) { $("s" + s).value = names[s] || ""; });
    }
    document.querySelectorAll("[data-seatlab]").forEach(function (el) { el.textContent = seatName(el.getAttribute("data-seatlab")); });
  }
  $("refbtn").onclick = function () { $("refpanel").hidden = false; showRef(); };
  $("pinok").onclick = function () {
    api("/api/referee/login", { pin: $("pin").value }).then(function (r) {
      $("pin").value = "";
      if (r.status === 200) { token = r.body.token; sessionStorage.setItem("gd-ref", token); showRef(); if (state) render(state); }
      else $("pinmsg").textContent = I.error(r.body, r.status);
    });
  };
  $("reviewbtn").onclick = function () {  // the review desk (kiosk/review) with this session
    sessionStorage.setItem("gd-review-token", token || "");
    location.href = "/review?lang=" + encodeURIComponent(I.lang());
  };
  $("logout").onclick = function () {
    api("/api/referee/logout"); token = null; sessionStorage.removeItem("gd-ref"); showRef(); $("refpanel").hidden = true;
    if (state) render(state);
  };
  function showRef() {
    $("pinbox").hidden = !!token; $("refbody").hidden = !token; $("pinmsg").textContent = "";
    if (token) { fillSelects(); loadPairings(); if (state) renderRef(state); }
  }
  function msg(r) {
    if (r.status === 401 && token) { token = null; sessionStorage.removeItem("gd-ref"); showRef(); }
    var el = $("refmsg");
    el.textContent = r.status === 200 ? tr("ref.ok") : I.error(r.body, r.status);
    el.classList.toggle("good", r.status === 200);
  }
  function clockTime(t) {
    t = Math.max(0, Math.round(t || 0));
    var m = Math.floor(t / 60), s = t % 60;
    return m + ":" + (s < 10 ? "0" : "") + s;
  }
  function evBody(e) {  // an event of the referee list in words and card pictures
    var d = e.data || {};
    if (e.type === "play") return esc(seatName(d.seat)) + " " + cardsHTML(d.cards, 22) + (d.combo ? " " + esc(kindName(d.combo.kind)) : "") +
      (d.legal === false ? ' <b class="illegal">✗</b>' : "");
    if (e.type === "pass") return esc(seatName(d.seat)) + " " + esc(tr("ui.passed"));
    if (e.type === "foul" || e.type === "warning") return esc(seatName(d.seat)) + " " + esc(foulName(d.kind)) +
      (d.review ? ' <span class="review">(' + esc(tr("ui.review")) + ")</span>" : "");
    if (e.type === "tribute" || e.type === "tribute_returned") return esc(seatName(d.from)) + " → " + esc(seatName(d.to)) + " " + cardsHTML([d.card], 22);
    if (e.type === "count_alert") return esc(seatName(d.seat)) + " " + esc(tr("ui.report", { n: d.count }));
    if (e.type === "series_ended") return esc(d.winner ? tr("team." + d.winner) : tr("ui.draw"));
    if (e.type === "seat_out") return esc(seatName(d.seat)) + " " + esc(tr("place." + d.place));
    if (e.type === "deal_started") return esc(tr("ui.deal_n", { n: e.deal })) + " · " + esc(tr("ui.level")) + " " + esc(d.level || "-") + (d.leader ? " · " + esc(tr("ui.leads", { seat: seatName(d.leader) })) : "");
    if (e.type === "deal_ended") return (d.order || []).map(seatName).map(esc).join(" ");
    if (e.type === "match_ended") return esc(d.winner ? tr("team." + d.winner) : tr("ui.draw"));
    return "";
  }
  function renderRef(st) {
    var evs = st.recent || [];
    $("reflist").innerHTML = evs.slice(-12).reverse().map(function (e) {
      var h = '<div class="ev' + (e.confirmed ? " ok" : "") + '"><span class="evt">' + esc(clockTime(e.t)) + "</span>" +
        '<span class="evk">' + esc(tr("ev." + e.type)) + "</span>" +
        '<span class="sum">' + evBody(e) + (e.confirmed ? ' <span class="okmark">✓ ' + esc(tr("ref.confirmed")) + "</span>" : "") + "</span>";
      h += '<button data-act="confirm" data-id="' + esc(e.id) + '">' + esc(tr("ref.confirm")) + "</button>";
      if (e.type === "play" || e.type === "pass") h += '<button data-act="correct" data-id="' + esc(e.id) + '" data-seat="' + esc((e.data || {}).seat || "") + '">' + esc(tr("ref.correct")) + "</button>";
      h += '<button data-act="void" data-id="' + esc(e.id) + '">' + esc(tr("ref.void")) + "</button></div>";
      return h;
    }).join("");
  }
  // the correction card grid: tap the cards the seat really played
  var corr = { id: null, cards: [] };
  function gridHTML() {
    var ranks = ["2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K", "A"], h = "";
    ["S", "H", "C", "D"].forEach(function (su) {
      h += '<div class="gridrow">' + ranks.map(function (r) {
        return '<button type="button" class="gc" data-card="' + su + r + '">' + cardSVG(su + r, 30) + "</button>";
      }).join("") + "</div>";
    });
    h += '<div class="gridrow">' + ["SB", "HR"].map(function (c) {
      return '<button type="button" class="gc" data-card="' + c + '">' + cardSVG(c, 30) + "</button>";
    }).join("") + "</div>";
    return h;
  }
  function toggleCard(b) {
    var c = b.dataset.card, n = corr.cards.filter(function (x) { return x === c; }).length;
    // two decks: a card may be chosen twice; a third tap takes it out again
    if (n < 2) corr.cards.push(c); else corr.cards = corr.cards.filter(function (x) { return x !== c; });
    showChosen();
  }
  function showChosen() {
    $("corrchosen").innerHTML = esc(tr("ref.chosen", { cards: "" })) + cardsHTML(corr.cards, 26);
    document.querySelectorAll("#grid .gc").forEach(function (b) {
      var n = corr.cards.filter(function (x) { return x === b.dataset.card; }).length;
      b.setAttribute("data-n", n); b.classList.toggle("on", n > 0);
    });
  }
  function openCorrection(id, seat) {
    corr = { id: id, cards: [] };
    if (!$("grid").firstChild) $("grid").innerHTML = gridHTML();
    fillSelects();
    if (seat) $("corrseat").value = seat;
    $("corrtitle").textContent = tr("ref.correctTitle", { seat: seatName($("corrseat").value) });
    $("corrbox").hidden = false; showChosen();
    $("corrbox").scrollIntoView({ block: "nearest" });
  }
  $("corrseat").onchange = function () { $("corrtitle").textContent = tr("ref.correctTitle", { seat: seatName($("corrseat").value) }); };
  function sendCorrection(cards) {
    api("/api/referee/correct", { event_id: corr.id, seat: $("corrseat").value, cards: cards }).then(function (r) {
      msg(r); if (r.status === 200) $("corrbox").hidden = true;
    });
  }
  $("corrsend").onclick = function () { if (corr.cards.length) sendCorrection(corr.cards); };
  $("corrpass").onclick = function () { sendCorrection([]); };
  $("corrcancel").onclick = function () { $("corrbox").hidden = true; };
  function refAct(act, id, seat) {
    if (act === "correct") openCorrection(id, seat);
    else api("/api/referee/" + act, { event_id: id }).then(msg);
  }
  $("dealend").onclick = function () {  // the four places, first to last
    var order = [1, 2, 3, 4].map(function (i) { return $("place" + i).value; });
    api("/api/referee/deal/end", { order: order }).then(msg);
  };
  $("dealstart").onclick = function () { var l = $("dealleader").value; api("/api/referee/deal/start", l ? { first_leader: l } : {}).then(msg); };
  $("foulok").onclick = function () {
    var k = $("foulkind").value, v = $("foulcards").value, body = { kind: k, seat: $("foulseat").value };
    if (k === "card_count" && v.trim() !== "") body.count = parseInt(v, 10);
    else if (k === "exposed_card" || k === "out_of_turn") body.cards = v;
    else body.detail = v;
    api("/api/referee/foul", body).then(msg);
  };
  $("seatok").onclick = function () { api("/api/referee/seating", { N: $("sN").value, E: $("sE").value, S: $("sS").value, W: $("sW").value }).then(msg); };
  function loadPairings() {
    $("pairstate").textContent = pairedAs ? tr("ref.paired", { name: pairedAs === "local" ? tr("ref.localScreen") : pairedAs }) : "";
    api("/api/referee/pairings", null, "GET").then(function (r) {
      if (r.status !== 200) return;
      $("pairlist").innerHTML = (r.body.devices || []).map(function (d) {
        return '<div class="ev"><span class="sum">' + esc(d.name) + " · " + esc(d.id) + '</span><button data-unpair="' + esc(d.id) + '">' + esc(tr("ref.unpair")) + "</button></div>";
      }).join("");
    });
  }
  $("pairok").onclick = function () {
    var name = $("pairname").value.trim();
    if (!name) { $("pairname").focus(); return; }
    api("/api/referee/pair", { name: name }).then(function (r) {
      msg(r);
      if (r.status === 200) { pairTok = r.body.token; pairedAs = r.body.name; localStorage.setItem("gd-pair", pairTok); loadPairings(); if (state) render(state); }
    });
  };

  var es = null;
  // close the stream when the page goes (a reload must not wait for the browser's connection
  // limit to free a socket still held by the old page's stream)
  window.addEventListener("pagehide", function () { if (es) es.close(); });
  function connect() {
    es = new EventSource("/api/stream");
    es.addEventListener("state", function (ev) { render(JSON.parse(ev.data)); });
    es.onerror = function () { es.close(); setTimeout(connect, 1500); };
  }
  I.apply();
  if (window.GD_STATE) render(window.GD_STATE);  // full state inlined by the server
  // live updates once the page has loaded (SSE; reconnects get the full state again)
  window.addEventListener("load", function () {
    setTimeout(connect, 50);
    if (!P.token && pairTok) checkPairing();
  });
})();
