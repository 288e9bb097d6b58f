// The dispute review desk (kiosk/review/routes.py): deals and their events in order, the
// footage of a chosen event (a WebM clip from the kiosk's recorded segments, sought a few
// seconds before the event), frame steps, slow motion, the detected corners and seat zones drawn
// over a paused frame, and rulings (each a new event; the referee's name and reason kept).
(function () {
  "use strict";
  var T = {
    zh: {
      title: "争议复核", offline: "离线申诉包", bundle: "申诉包", logout: "退出", pin: "裁判密码",
      enter: "进入", back: "◀ 上一帧", play: "▶ 播放/暂停", fwd: "下一帧 ▶", detections: "识别框",
      referee: "裁判姓名", reason: "理由", confirm: "确认", "void": "作废", correct: "更正牌",
      foul_add: "判犯规", foul_remove: "撤销犯规", seat: "座位", apply: "提交裁决",
      rulings: "裁决记录", deal: "第{n}副", disputes: "{n} 项待复核", pass: "过",
      deal_started: "开局，打{l}", deal_ended: "结束：{o}", seat_out: "出完，第{p}名",
      foul: "犯规", correction: "更正", notice: "提示", warning: "警告", count_alert: "报牌 {c} 张",
      tribute: "进贡", tribute_returned: "还贡", anti_tribute: "抗贡", voided: "（已作废）",
      segment: "录像 {f}，第 {o} 秒", gap: "此时没有录像：{w}", nofootage: "本桌没有录像",
      need: "请填写裁判姓名和理由", done: "裁决已记录（新事件 {n} 条）", noted: "已确认（记录在案）",
      pick_seat: "请选择座位", pick_kind: "犯规类型", offline_rule: "离线申诉包：裁决请在该桌终端上作出",
      wrongpin: "密码错误", frame: "画面 t={t} 秒", nodet: "无识别：{w}", rule_on: "裁决对象：",
      ruled: "{r} 裁决 {a}：{why}", corr: "更正（替换第 {s} 条）：{why}", cards_none: "未选牌 = 过",
      rerun: "重新识别录像", diffs: "重新识别的差异", rerunning: "正在用当前模型重新识别本副录像……（需要一些时间）",
      rerun_sum: "记录 {a} 条，重新识别 {b} 条，差异 {n} 处；记录未改动（裁判可把差异作为裁决）",
      changed: "不一致", not_seen_again: "录像中未再识别到", new_in_footage: "录像中多出",
      log: "记录", reread: "重新识别", use: "作为更正裁决", neargap: "（靠近录像缺口）",
      reread_reason: "重新识别录像显示", noclip: "录像片段无法播放"
    },
    en: {
      title: "Dispute review", offline: "offline appeal bundle", bundle: "Appeal bundle", logout: "Log out",
      pin: "Referee PIN", enter: "Enter", back: "◀ Frame", play: "▶ Play/Pause", fwd: "Frame ▶",
      detections: "Detections", referee: "Referee", reason: "Reason", confirm: "Confirm", "void": "Void",
      correct: "Correct cards", foul_add: "Add foul", foul_remove: "Remove foul", seat: "Seat",
      apply: "Apply ruling", rulings: "Rulings", deal: "Deal {n}", disputes: "{n} to review", pass: "pass",
      deal_started: "deal starts, level {l}", deal_ended: "deal over: {o}", seat_out: "out, place {p}",
      foul: "FOUL", correction: "correction", notice: "notice", warning: "warning",
      count_alert: "{c} cards left", tribute: "tribute", tribute_returned: "return",
      anti_tribute: "anti-tribute", voided: "(voided)", segment: "segment {f}, at {o} s",
      gap: "no footage here: {w}", nofootage: "this table has no footage",
      need: "give the referee's name and a reason", done: "ruling recorded ({n} new events)",
      noted: "confirmed (noted)", pick_seat: "choose the seat", pick_kind: "foul kind",
      offline_rule: "offline appeal bundle: rulings are made on the table kiosk",
      wrongpin: "wrong PIN", frame: "frame t={t} s", nodet: "no detections: {w}", rule_on: "Ruling on: ",
      ruled: "{r} ruled {a}: {why}", corr: "correction (replaces #{s}): {why}", cards_none: "no cards = a pass",
      rerun: "Re-read footage", diffs: "Re-read differences",
      rerunning: "re-reading this deal's footage with the current model... (this takes a while)",
      rerun_sum: "{a} events in the log, {b} re-read, {n} differences; the log is unchanged (a referee may apply a difference as a ruling)",
      changed: "differs", not_seen_again: "not seen in the footage", new_in_footage: "new in the footage",
      log: "log", reread: "re-read", use: "Use as correction", neargap: "(near a footage gap)",
      reread_reason: "the footage re-read shows", noclip: "the clip could not be played"
    }
  };
  var FOULS = ["out_of_turn", "exposed_card", "illegal_play", "slow_play", "card_count", "wrong_tribute", "duplicate_card"];
  var q = new URLSearchParams(location.search);
  var lang = q.get("lang") || ((navigator.language || "").indexOf("zh") === 0 ? "zh" : "en");
  var token = q.get("token") || sessionStorage.getItem("gd-review-token") || "";
  var S = { offline: false, deals: [], deal: null, dealNo: null, sel: null, loc: null, video: null,
            action: null, seat: null, picked: {}, order: [], lookN: 0 };
  window.GD_REVIEW = S;
  function $(id) { return document.getElementById(id); }
  function esc(s) { return String(s == null ? "" : s).replace(/[&<>"]/g, function (c) { return "&#" + c.charCodeAt(0) + ";"; }); }
  function tr(key, args) {
    var s = (T[lang] && T[lang][key]) || T.en[key] || key;
    Object.keys(args || {}).forEach(function (k) { s = s.split("{" + k + "}").join(args[k]); });
    return s;
  }
  function both(o) { return o ? (lang === "zh" ? (o.zh || o.en) : o.en) : ""; }
  function mmss(t) {
    var m = Math.floor(t / 60), s = t - m * 60;
    return m + ":" + (s < 10 ? "0" : "") + s.toFixed(1);
  }
  function say(text, ok) {
    var m = $("message");
    m.textContent = text; m.hidden = !text; m.className = "message" + (ok ? " ok" : "");
  }
  function api(path, body) {
    var opt = { headers: {} };
    if (token) opt.headers["X-Referee-Token"] = token;
    if (body !== undefined) { opt.method = "POST"; opt.headers["Content-Type"] = "application/json"; opt.body = JSON.stringify(body); }
    return fetch(path, opt).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (j) {
        if (r.status === 401 && !S.offline) { showLogin(); }
        if (!r.ok) { var e = new Error(lang === "zh" ? (j.zh || j.detail) : j.detail); e.status = r.status; e.body = j; throw e; }
        return j;
      });
    });
  }
  function translate() {
    document.documentElement.lang = lang;
    Array.prototype.forEach.call(document.querySelectorAll("[data-t]"), function (el) { el.textContent = tr(el.getAttribute("data-t")); });
    $("lang").textContent = lang === "zh" ? "English" : "中文";
    var sel = $("foulkind");
    sel.innerHTML = FOULS.map(function (k) { return '<option value="' + k + '">' + k + "</option>"; }).join("");
  }
  function showLogin() { $("login").hidden = false; $("desk").hidden = true; $("logout").hidden = true; $("pin").focus(); }

  // ---------------------------------------------------------------- deals and events
  function loadDeals() {
    return api("/api/review/deals").then(function (d) {
      S.offline = d.offline; S.deals = d.deals; S.lead = d.lead_s;
      $("login").hidden = true; $("desk").hidden = false; $("logout").hidden = d.offline;
      $("offline").hidden = !d.offline;
      $("tablename").textContent = d.table;
      $("deals").innerHTML = d.deals.map(function (x) {
        return '<button type="button" class="deal" data-deal="' + x.deal + '"><span class="n">' + esc(tr("deal", { n: x.deal })) +
          "</span>" + (x.disputes ? ' <span class="hot">' + esc(tr("disputes", { n: x.disputes })) + "</span>" : "") + "</button>";
      }).join("");
      if (!d.footage.segments.length) $("where").textContent = tr("nofootage");
      var want = Number(q.get("deal")) || (d.deals.length ? d.deals[d.deals.length - 1].deal : null);
      if (want != null) return loadDeal(want);
    });
  }
  function loadDeal(n) {
    return api("/api/review/deals/" + n).then(function (d) {
      S.deal = d; S.dealNo = n;
      Array.prototype.forEach.call(document.querySelectorAll(".deal"), function (b) { b.classList.toggle("on", Number(b.getAttribute("data-deal")) === n); });
      var b = $("bundle"); b.hidden = false;
      $("rerun").hidden = S.offline; $("diffbox").hidden = true;
      b.href = "/api/review/bundle?deal=" + n + (token ? "&token=" + encodeURIComponent(token) : "");
      renderEvents(); renderRulings();
      if (S.sel) {
        var again = d.events.filter(function (e) { return e.id === S.sel.id; })[0];
        if (again) { S.sel = again; mark(); }
      }
    });
  }
  function what(e) {
    var ty = e.type, h = "";
    if (ty === "play") h = cardsHTML(e.cards, 26);
    else if (ty === "pass") h = esc(tr("pass"));
    else if (ty === "deal_started") h = esc(tr("deal_started", { l: e.level || "?" }));
    else if (ty === "deal_ended") h = esc(tr("deal_ended", { o: (e.order || []).join(" ") }));
    else if (ty === "seat_out") h = esc(tr("seat_out", { p: e.place }));
    else if (ty === "count_alert") h = esc(tr("count_alert", { c: e.count }));
    else if (ty === "tribute" || ty === "tribute_returned") h = esc(tr(ty)) + " " + cardsHTML([e.card], 26);
    else h = "<b>" + esc(tr(ty)) + "</b>" + (e.kind ? " " + esc(e.kind) : "");
    var note = e.reason || e.detail || "";
    if (ty === "correction") note = tr("corr", { s: seqOf(e.target || e.replaces), why: e.reason || "" });
    if (!e.effective) h += " " + esc(tr("voided"));
    return h + (note ? '<span class="note">' + esc(note) + "</span>" : "");
  }
  function seqOf(id) {
    var x = (S.deal ? S.deal.events : []).filter(function (e) { return e.id === id; })[0];
    return x ? x.seq : "?";
  }
  function renderEvents() {
    $("events").innerHTML = S.deal.events.map(function (e) {
      var cls = "ev " + esc(e.type) + (e.disputed ? " disputed" : "") + (e.open ? " open" : "") + (e.effective ? "" : " void");
      return '<li class="' + cls + '" data-id="' + esc(e.id) + '" data-seq="' + e.seq + '" data-t="' + e.t + '">' +
        '<span class="time">' + mmss(e.t) + '</span><span class="seat">' + esc(e.seat || "") + "</span>" +
        '<span class="what">' + what(e) + "</span></li>";
    }).join("");
    mark();
  }
  function mark() {
    Array.prototype.forEach.call(document.querySelectorAll(".ev"), function (li) {
      li.classList.toggle("on", !!S.sel && li.getAttribute("data-id") === S.sel.id);
    });
  }
  function renderRulings() {
    var items = [];
    S.deal.events.forEach(function (e) {
      (e.rulings || []).forEach(function (r) {
        items.push('<li class="rl">' + esc(mmss(e.t)) + " #" + e.seq + " — " +
          esc(tr("ruled", { r: r.referee, a: tr(r.action), why: r.reason })) + "</li>");
      });
      if (e.type === "correction") {
        items.push('<li class="corr">' + esc(mmss(e.t)) + " #" + e.seq + " — " +
          esc(tr("corr", { s: seqOf(e.target || e.replaces), why: e.reason || "" })) + "</li>");
      }
    });
    $("rulings").innerHTML = items.join("");
  }

  // ---------------------------------------------------------------- footage
  var video = $("video"), canvas = $("overlay");
  function loadVideo(v) {
    return new Promise(function (resolve, reject) {
      if (video.getAttribute("data-url") === v.url && video.readyState >= 1) { resolve(); return; }
      video.setAttribute("data-url", v.url);
      video.onloadedmetadata = function () { video.onloadedmetadata = null; video.onerror = null; resolve(); };
      video.onerror = function () { reject(new Error(tr("noclip"))); };
      video.src = v.url;
      video.load();
    });
  }
  function choose(id) {
    var e = S.deal.events.filter(function (x) { return x.id === id; })[0];
    if (!e) return Promise.resolve();
    S.sel = e; mark(); say("");
    $("ruling").hidden = false;
    $("chosen").innerHTML = esc(tr("rule_on")) + "#" + e.seq + " " + esc(mmss(e.t)) + " " + esc(e.seat || "") + " " + what(e);
    if (S.offline) say(tr("offline_rule"));
    return api("/api/review/locate?event=" + encodeURIComponent(id)).then(function (loc) {
      S.loc = loc;
      $("where").textContent = loc.segment ? tr("segment", { f: loc.segment, o: loc.offset.toFixed(2) }) : tr("gap", { w: both(loc.gap) });
      var g = $("gap");
      g.hidden = !!loc.segment; g.textContent = loc.segment ? "" : tr("gap", { w: both(loc.gap) });
      if (!loc.video) return;
      S.video = loc.video;
      video.setAttribute("data-t0", loc.video.t0);
      return loadVideo(loc.video).then(function () {
        video.pause();
        video.currentTime = loc.video.seek;
        video.setAttribute("data-seek", loc.video.seek);
      });
    }).catch(function (err) { say(err.message); });
  }
  function nowT() { return (S.video ? S.video.t0 : 0) + video.currentTime; }
  function clock() { $("clock").textContent = S.video ? "t = " + nowT().toFixed(2) + " s" : ""; }
  function clearOverlay() { var c = canvas.getContext("2d"); c.clearRect(0, 0, canvas.width, canvas.height); }
  function look() {
    clock();
    if (!$("showdet").checked || !S.video || !video.paused) { clearOverlay(); return; }
    var n = ++S.lookN, t = nowT();
    api("/api/review/look?t=" + t.toFixed(3)).then(function (seen) {
      if (n !== S.lookN) return;
      draw(seen);
    }).catch(function () { if (n === S.lookN) clearOverlay(); });
  }
  function draw(seen) {
    canvas.width = video.clientWidth; canvas.height = video.clientHeight;
    var c = canvas.getContext("2d"), k = video.clientWidth / seen.size[0];
    c.clearRect(0, 0, canvas.width, canvas.height);
    c.lineWidth = 2; c.font = "bold 13px sans-serif";
    Object.keys(seen.zones || {}).forEach(function (z) {
      var p = seen.zones[z]; c.strokeStyle = "#3ca0ff"; c.beginPath();
      p.forEach(function (pt, i) { if (i) c.lineTo(pt[0] * k, pt[1] * k); else c.moveTo(pt[0] * k, pt[1] * k); });
      c.closePath(); c.stroke();
    });
    (seen.cards || []).forEach(function (d) {
      var b = d.box; c.strokeStyle = "#00e000"; c.strokeRect(b[0] * k, b[1] * k, (b[2] - b[0]) * k, (b[3] - b[1]) * k);
      c.fillStyle = "#00e000"; c.fillText(d.card, b[0] * k, Math.max(12, b[1] * k - 3));
    });
    canvas.setAttribute("data-cards", (seen.cards || []).length);
    if (seen.cards == null && seen.why) $("where").textContent = tr("nodet", { w: seen.why });
  }
  video.addEventListener("seeked", look);
  video.addEventListener("pause", look);
  video.addEventListener("play", clearOverlay);
  video.addEventListener("timeupdate", clock);
  function step(dir) {
    if (!S.video) return;
    video.pause();
    var fps = S.video.fps || 5;
    video.currentTime = Math.max(0, video.currentTime + dir / fps);
  }

  // ---------------------------------------------------------------- rulings
  function allCards() {
    var out = [];
    "SHCD".split("").forEach(function (s) { "23456789TJQKA".split("").forEach(function (r) { out.push(s + r); }); });
    return out.concat(["SB", "HR"]);
  }
  function renderGrid() {
    $("grid").innerHTML = allCards().map(function (c) {
      var n = S.picked[c] || 0;
      return '<button type="button" class="n' + n + '" data-card="' + c + '">' + cardSVG(c, 40) + (n ? "<i>" + n + "</i>" : "") + "</button>";
    }).join("");
    var list = [];
    S.order.forEach(function (c) { for (var i = 0; i < (S.picked[c] || 0); i++) list.push(c); });
    $("picked").innerHTML = list.length ? cardsHTML(list, 30) : esc(tr("cards_none"));
  }
  function pickedList() {
    var list = [];
    S.order.forEach(function (c) { for (var i = 0; i < (S.picked[c] || 0); i++) list.push(c); });
    return list;
  }
  function setAction(a) {
    S.action = a;
    Array.prototype.forEach.call(document.querySelectorAll(".act[data-action]"), function (b) { b.classList.toggle("on", b.getAttribute("data-action") === a); });
    var extra = a === "correct" || a === "foul_add";
    $("extra").hidden = !extra; $("grid").hidden = a !== "correct"; $("picked").hidden = a !== "correct";
    $("foulkind").hidden = a !== "foul_add";
    S.seat = S.sel && S.sel.seat ? S.sel.seat : null; seatMarks();
    if (a === "correct") {
      S.picked = {}; S.order = [];
      ((S.sel && S.sel.cards) || []).forEach(function (c) { S.picked[c] = (S.picked[c] || 0) + 1; if (S.order.indexOf(c) < 0) S.order.push(c); });
      renderGrid();
    }
    if (!extra) submit();
  }
  function seatMarks() {
    Array.prototype.forEach.call(document.querySelectorAll(".seatbtn"), function (b) { b.classList.toggle("on", b.getAttribute("data-seat") === S.seat); });
  }
  function submit() {
    if (S.offline) { say(tr("offline_rule")); return; }
    var referee = $("referee").value.trim(), reason = $("reason").value.trim();
    if (!referee || !reason) { say(tr("need")); return; }
    localStorage.setItem("gd-review-referee", referee);
    var body = { event_id: S.sel ? S.sel.id : "", action: S.action, referee: referee, reason: reason };
    if (S.action === "correct" || S.action === "foul_add") {
      if (!S.seat) { say(tr("pick_seat")); return; }
      body.seat = S.seat;
    }
    if (S.action === "correct") body.cards = pickedList();
    if (S.action === "foul_add") body.kind = $("foulkind").value;
    api("/api/review/ruling", body).then(function (out) {
      say(out.events.length ? tr("done", { n: out.events.length }) : tr("noted"), true);
      $("reason").value = ""; $("extra").hidden = true; setMarks();
      return loadDeal(S.dealNo);
    }).catch(function (err) { say(err.message); });
  }
  function setMarks() {
    Array.prototype.forEach.call(document.querySelectorAll(".act[data-action]"), function (b) { b.classList.remove("on"); });
  }

  // ---------------------------------------------------------------- re-read
  function sideHTML(list) {
    return list.length ? list.map(function (e) {
      var seq = e.seq != null ? "#" + e.seq + " " : "";
      return esc(seq + mmss(e.t) + " " + (e.seat || "") + " ") +
        (e.type === "play" ? cardsHTML(e.cards, 22) : esc(tr(e.type)));
    }).join("; ") : "-";
  }
  function rerun() {
    var n = S.dealNo;
    say(tr("rerunning"), true);
    $("rerun").disabled = true;
    api("/api/review/rerun?deal=" + n).then(function (r) {
      S.diffs = r.differences;
      $("diffbox").hidden = false;
      $("diffsum").textContent = tr("rerun_sum", { a: r.log_events, b: r.reread_events, n: r.differences.length });
      $("diffs").innerHTML = r.differences.map(function (d, i) {
        var use = d.kind === "changed" && d.log.length === 1 && d.reread.length === 1 && d.log[0].type === "play" ?
          ' <button type="button" class="act use" data-diff="' + i + '">' + esc(tr("use")) + "</button>" : "";
        return '<li class="diff" data-kind="' + esc(d.kind) + '"><b>' + esc(tr(d.kind)) + "</b> " + esc(tr("log")) + ": " +
          sideHTML(d.log) + " | " + esc(tr("reread")) + ": " + sideHTML(d.reread) + (d.near_gap ? " " + esc(tr("neargap")) : "") + use + "</li>";
      }).join("");
      say("");
    }).catch(function (err) { say(err.message); }).then(function () { $("rerun").disabled = false; });
  }
  function useDiff(i) {
    var d = S.diffs[i], ev = d.log[0], again = d.reread[0];
    return choose(ev.id).then(function () {
      setAction("correct");
      S.seat = again.seat; seatMarks();
      S.picked = {}; S.order = [];
      (again.cards || []).forEach(function (c) { S.picked[c] = (S.picked[c] || 0) + 1; if (S.order.indexOf(c) < 0) S.order.push(c); });
      renderGrid();
      if (!$("reason").value) $("reason").value = tr("reread_reason") + " " + (again.cards || []).join(" ");
    });
  }

  // ---------------------------------------------------------------- wiring
  $("rerun").addEventListener("click", rerun);
  $("diffs").addEventListener("click", function (ev) {
    var b = ev.target.closest("button[data-diff]"); if (b) useDiff(Number(b.getAttribute("data-diff")));
  });
  $("deals").addEventListener("click", function (ev) {
    var b = ev.target.closest(".deal"); if (b) loadDeal(Number(b.getAttribute("data-deal")));
  });
  $("events").addEventListener("click", function (ev) {
    var li = ev.target.closest(".ev"); if (li) choose(li.getAttribute("data-id"));
  });
  $("grid").addEventListener("click", function (ev) {
    var b = ev.target.closest("button[data-card]"); if (!b) return;
    var c = b.getAttribute("data-card"), n = ((S.picked[c] || 0) + 1) % 3;
    S.picked[c] = n; if (n && S.order.indexOf(c) < 0) S.order.push(c);
    renderGrid();
  });
  Array.prototype.forEach.call(document.querySelectorAll(".act[data-action]"), function (b) {
    b.addEventListener("click", function () { setAction(b.getAttribute("data-action")); });
  });
  Array.prototype.forEach.call(document.querySelectorAll(".seatbtn"), function (b) {
    b.addEventListener("click", function () { S.seat = b.getAttribute("data-seat"); seatMarks(); });
  });
  $("apply").addEventListener("click", submit);
  $("back").addEventListener("click", function () { step(-1); });
  $("fwd").addEventListener("click", function () { step(1); });
  $("play").addEventListener("click", function () { if (video.paused) video.play(); else video.pause(); });
  Array.prototype.forEach.call(document.querySelectorAll(".rate"), function (b) {
    b.addEventListener("click", function () {
      video.playbackRate = Number(b.getAttribute("data-rate"));
      Array.prototype.forEach.call(document.querySelectorAll(".rate"), function (x) { x.classList.toggle("on", x === b); });
    });
  });
  $("showdet").addEventListener("change", look);
  $("lang").addEventListener("click", function () {
    lang = lang === "zh" ? "en" : "zh"; translate();
    if (S.deal) { renderEvents(); renderRulings(); }
  });
  $("login").addEventListener("submit", function (ev) {
    ev.preventDefault();
    fetch("/api/referee/login", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ pin: $("pin").value }) })
      .then(function (r) { return r.json().then(function (j) { return [r.status, j]; }); })
      .then(function (x) {
        if (x[0] !== 200) { say(tr("wrongpin") + ": " + (x[1].detail || "")); return; }
        token = x[1].token; sessionStorage.setItem("gd-review-token", token); $("pin").value = ""; say("");
        return loadDeals();
      });
  });
  $("logout").addEventListener("click", function () {
    api("/api/referee/logout", {}).catch(function () {});
    token = ""; sessionStorage.removeItem("gd-review-token"); showLogin();
  });
  S.choose = choose; S.loadDeal = loadDeal; S.submit = submit; S.setAction = setAction;
  $("referee").value = localStorage.getItem("gd-review-referee") || "";
  translate();
  loadDeals().catch(function (err) { if (err.status !== 401) say(err.message); });
})();
