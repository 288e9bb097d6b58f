// The table screen: renders the kiosk's state (SSE /api/stream, full state on every message).
(function () {
  "use strict";
  var T = {
    zh: { table: "桌", teamNS: "南北", teamEW: "东西", deal: "局", level: "打", referee: "裁判", order: "出完顺序",
      plays: "最近出牌", fouls: "犯规", pinTitle: "裁判模式：输入密码", login: "进入", refTitle: "裁判模式",
      dealStart: "开始新的一局", dealEnd: "裁定本局名次", logout: "退出", close: "关闭", events: "事件（确认 / 更正 / 作废）", markFoul: "记录犯规",
      record: "记录", seating: "座位（对名）", save: "保存", pass: "不要", left: "张", report: "报牌", onTurn: "出牌",
      out: "出完", place: ["", "上游", "二游", "三游", "下游"], confirm: "确认", correct: "更正", void: "作废",
      lead: "首出", waiting: "等待开局", winner: "胜方", matchOver: "比赛结束", dealOver: "本局结束", offline: "离线",
      sent: "已发送", pending: "待发送", local: "仅本机", recording: "记录中", stopped: "已停止记录", lang: "English",
      seatName: { N: "北", E: "东", S: "南", W: "西" }, pass_: "不要", trickBy: "当前牌：", clock: "限时", reread: "已按规则重读", review: "摄像头判定，待裁判确认" },
    en: { table: "Table", teamNS: "NS", teamEW: "EW", deal: "Deal", level: "Level", referee: "Referee", order: "Finishing order",
      plays: "Last plays", fouls: "Fouls", pinTitle: "Referee mode: enter the PIN", login: "Enter", refTitle: "Referee mode",
      dealStart: "Start a new deal", dealEnd: "Rule the finishing order", logout: "Log out", close: "Close", events: "Events (confirm / correct / void)",
      markFoul: "Mark a foul", record: "Record", seating: "Seating (pair names)", save: "Save", pass: "PASS", left: "left",
      report: "report", onTurn: "to play", out: "out", place: ["", "1st", "2nd", "3rd", "4th"], confirm: "Confirm",
      correct: "Correct", void: "Void", lead: "lead", waiting: "Waiting for a deal", winner: "Winner",
      matchOver: "Match over", dealOver: "Deal over", offline: "offline", sent: "sent", pending: "pending", local: "local only",
      recording: "recording", stopped: "RECORDING STOPPED", lang: "中文", seatName: { N: "N", E: "E", S: "S", W: "W" },
      pass_: "pass", trickBy: "Trick: ", clock: "clock", reread: "re-read",
      review: "camera reading: counts when the referee marks it" }
  };
  var qlang = new URLSearchParams(location.search).get("lang");
  if (qlang === "en" || qlang === "zh") localStorage.setItem("gd-lang", qlang);
  var lang = localStorage.getItem("gd-lang") || "zh";
  var state = null, token = sessionStorage.getItem("gd-ref") || null, rate = 1, stamp = 0;
  function t(k) { return T[lang][k]; }
  function $(id) { return document.getElementById(id); }
  function esc(s) { return String(s == null ? "" : s).replace(/[&<>"]/g, function (c) { return "&#" + c.charCodeAt(0) + ";"; }); }
  function applyLang() {
    document.documentElement.lang = lang;
    document.querySelectorAll("[data-i18n]").forEach(function (el) { el.textContent = t(el.getAttribute("data-i18n")); });
    $("lang").textContent = t("lang");
    if (state) render(state);
  }
  function seatHTML(s, st) {
    var d = st.deal, name = (st.seating || {})[s] || "";
    var cnt = d ? d.counts[s] : 27, place = d ? d.order.indexOf(s) + 1 : 0;
    var rep = d && cnt > 0 && cnt <= st.report_threshold;
    var h = '<div class="sid">' + esc(t("seatName")[s]) + "</div>" + '<div class="name">' + esc(name) + "</div>";
    h += '<div class="count' + (rep ? " report" : "") + '">' + cnt + '</div><div>' + esc(t("left")) + "</div>";
    if (rep) h += '<span class="badge">' + esc(t("report")) + " " + cnt + "</span>";
    if (place > 0) h += '<span class="badge">' + esc(t("place")[place] || place) + "</span>";
    h += '<div class="clock" id="clock-' + s + '"></div>';
    h += '<button class="pass" data-pass="' + s + '">' + esc(t("pass")) + "</button>";
    return h;
  }
  function render(st) {
    state = st; stamp = performance.now(); rate = st.rate || 1;
    $("table").textContent = st.table; $("profile").textContent = st.profile_title || st.profile;
    $("lvNS").textContent = st.levels.NS; $("lvEW").textContent = st.levels.EW;
    $("dealno").textContent = st.deal_no || "-"; $("deallv").textContent = st.deal ? (st.deal.level || "-") : "-";
    var d = st.deal;
    ["N", "E", "S", "W"].forEach(function (s) {
      var el = $("seat-" + s); el.innerHTML = seatHTML(s, st);
      el.classList.toggle("turn", !!(d && !d.over && d.turn === s && !st.match_over));
      el.classList.toggle("out", !!(d && d.order.indexOf(s) >= 0));
    });
    if (d && d.trick) {
      $("trickhead").textContent = t("trickBy") + t("seatName")[d.owner] + " · " + d.trick.kind;
      $("trick").innerHTML = cardsHTML(d.trick.cards, 60);
    } else {
      $("trickhead").textContent = d && !d.over ? (d.turn ? t("seatName")[d.turn] + " " + t("lead") : "") : t("waiting");
      $("trick").innerHTML = "";
    }
    var res = "";
    if (st.match_over && st.last_match) res = t("matchOver") + " · " + t("winner") + ": " + (st.last_match.winner || "draw");
    else if (d && d.over && st.last_deal) res = t("dealOver") + " · " + st.last_deal.order.map(function (s) { return t("seatName")[s]; }).join(" ");
    $("result").textContent = res;
    $("order").innerHTML = (d ? d.order : []).map(function (s) { return "<li>" + esc(t("seatName")[s]) + " " + esc((st.seating || {})[s] || "") + "</li>"; }).join("");
    $("plays").innerHTML = (st.plays || []).slice(-6).reverse().map(function (p) {
      var body = p.type === "pass" ? "<i>" + esc(t("pass_")) + "</i>" : cardsHTML(p.cards, 26);
      if (p.reread) body += ' <span class="reread" title="' + esc(p.reread) + '">↺ ' + esc(t("reread")) + "</span>";
      return '<div class="p' + (p.legal ? "" : " illegal") + '"><b>' + esc(t("seatName")[p.seat]) + "</b> " + body + "</div>";
    }).join("");
    $("fouls").innerHTML = (st.fouls || []).slice().reverse().map(function (f) {
      return "<li><b>" + esc(f.seat ? t("seatName")[f.seat] : "?") + "</b> " + esc(f.kind) + (f.type === "warning" ? " (warning)" : "") + " — " + esc(f.detail) +
        (f.review ? ' <span class="review">(' + esc(t("review")) + ")</span>" : "") + "</li>";
    }).join("");
    $("alarms").innerHTML = (st.alarms || []).map(function (a) {
      return '<div class="alarm" data-kind="' + esc(a.kind) + '">⚠ ' + esc(lang === "zh" ? a.zh : a.en) + "</div>";
    }).join("");
    var ob = st.outbox, s2 = (st.recording ? t("recording") : t("stopped")) + " · seq " + st.seq;
    if (ob) s2 += " · " + t("sent") + " " + ob.sent + " · " + t("pending") + " " + ob.pending + " · " + t("local") + " " + ob.local + (ob.connected ? "" : " · " + t("offline"));
    s2 += " · " + (st.source ? st.source.description : "");
    $("status").textContent = s2;
    if (token) renderRef(st);
    tick();
  }
  function tick() {
    if (!state) return;
    var c = state.shot_clock;
    ["N", "E", "S", "W"].forEach(function (s) { var el = $("clock-" + s); if (el) el.textContent = ""; });
    if (!c) return;
    var now = state.now_t + (performance.now() - stamp) / 1000 * rate;
    var left = Math.round(c.limit - (now - c.since));
    var el = $("clock-" + c.seat);
    if (el) { el.textContent = t("clock") + " " + left + " s"; el.classList.toggle("late", left < 0); }
  }
  setInterval(tick, 250);
  function api(path, body) {
    var h = { "Content-Type": "application/json" };
    if (token) h["X-Referee-Token"] = token;
    return fetch(path, { method: "POST", headers: h, body: JSON.stringify(body || {}) }).then(function (r) {
      return r.json().then(function (j) { return { status: r.status, body: j }; });
    });
  }
  document.addEventListener("click", function (e) {
    var b = e.target.closest("button"); if (!b) return;
    if (b.dataset.pass) api("/api/seat/" + b.dataset.pass + "/pass");
    if (b.dataset.act) refAct(b.dataset.act, b.dataset.id, b.dataset.seat);
  });
  $("lang").onclick = function () { lang = lang === "zh" ? "en" : "zh"; localStorage.setItem("gd-lang", lang); applyLang(); };
  $("refbtn").onclick = function () { $("refpanel").hidden = false; showRef(); };
  $("closeref").onclick = function () { $("refpanel").hidden = true; };
  $("pinok").onclick = function () {
    api("/api/referee/login", { pin: $("pin").value }).then(function (r) {
      $("pin").value = "";
      if (r.status === 200) { token = r.body.token; sessionStorage.setItem("gd-ref", token); showRef(); }
      else $("pinmsg").textContent = r.body.detail;
    });
  };
  $("logout").onclick = function () { api("/api/referee/logout"); token = null; sessionStorage.removeItem("gd-ref"); showRef(); $("refpanel").hidden = true; };
  function showRef() { $("pinbox").hidden = !!token; $("refbody").hidden = !token; $("pinmsg").textContent = ""; if (token && state) renderRef(state); }
  function msg(r) {
    if (r.status === 401 && token) { token = null; sessionStorage.removeItem("gd-ref"); showRef(); }
    $("refmsg").textContent = r.status === 200 ? "OK" : (r.body.detail || ("HTTP " + r.status));
  }
  function renderRef(st) {
    $("reflist").innerHTML = (st.recent || []).slice(-12).reverse().map(function (e) {
      var h = '<div class="ev' + (e.confirmed ? " ok" : "") + '"><span class="sum">#' + e.seq + " " + esc(e.type) + " · " + esc(e.summary) + "</span>";
      h += '<button data-act="confirm" data-id="' + e.id + '">' + esc(t("confirm")) + "</button>";
      if (e.type === "play" || e.type === "pass") h += '<button data-act="correct" data-id="' + e.id + '">' + esc(t("correct")) + "</button>";
      h += '<button data-act="void" data-id="' + e.id + '">' + esc(t("void")) + "</button></div>";
      return h;
    }).join("");
  }
  function refAct(act, id) {
    if (act === "correct") {
      var seat = prompt("seat (N E S W)"); if (!seat) return;
      var cards = prompt("cards (e.g. S3 S4 S5 S6 S7; empty = pass)") || "";
      api("/api/referee/correct", { event_id: id, seat: seat.trim().toUpperCase(), cards: cards }).then(msg);
    } else api("/api/referee/" + act, { event_id: id }).then(msg);
  }
  $("dealend").onclick = function () {
    var order = $("dealorder").value.trim().toUpperCase().split(/[\s,]+/).filter(Boolean);
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
  function connect() {
    var es = new EventSource("/api/stream");
    es.addEventListener("state", function (ev) { render(JSON.parse(ev.data)); });
    es.onerror = function () { es.close(); setTimeout(connect, 1500); };
  }
  applyLang();
  if (window.GD_STATE) render(window.GD_STATE);  // full state inlined by the server
  // live updates once the page has loaded (SSE; reconnects get the full state again)
  window.addEventListener("load", function () { setTimeout(connect, 50); });
})();
