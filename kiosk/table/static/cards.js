// Card images drawn as SVG (no image files): cardSVG("SA") -> an <svg> string.
// Notation (CONTRACT.md): suit S H C D + rank 2..9 T J Q K A; jokers SB (small), HR (big).
(function (g) {
  "use strict";
  var SUIT = { S: "\u2660", H: "\u2665", C: "\u2663", D: "\u2666" };
  function esc(s) { return String(s).replace(/[&<>"]/g, function (c) { return "&#" + c.charCodeAt(0) + ";"; }); }
  // the joker's label in the page's language (the catalogue of i18n.js when loaded)
  function jokerName(code) {
    if (g.GDI18N) return g.GDI18N.tr("card." + code);
    return code === "HR" ? "\u5927\u738b" : "\u5c0f\u738b";
  }
  function cardSVG(code, width) {
    code = String(code || "").toUpperCase();
    var w = width || 54, h = Math.round(w * 1.4);
    var open = '<svg class="card" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 60 84" width="' + w +
      '" height="' + h + '" role="img" aria-label="' + esc(code) + '" data-card="' + esc(code) + '">' +
      '<rect x="1" y="1" width="58" height="82" rx="6" ry="6" fill="#fffef8" stroke="#333" stroke-width="1.5"/>';
    if (code === "SB" || code === "HR") {
      var big = code === "HR", col = big ? "#c8102e" : "#111";
      var letters = "JOKER".split("").map(function (ch, i) {
        return '<text x="8" y="' + (15 + i * 11) + '" font-size="10" font-weight="700" fill="' + col +
          '" text-anchor="middle" font-family="sans-serif">' + ch + "</text>";
      }).join("");
      return open + letters +
        '<text x="36" y="52" font-size="30" text-anchor="middle" fill="' + col + '">\u2605</text>' +
        '<text x="36" y="74" font-size="11" text-anchor="middle" fill="' + col +
        '" font-family="sans-serif">' + esc(jokerName(code)) + "</text></svg>";
    }
    var s = code.charAt(0), r = code.slice(1);
    var sym = SUIT[s] || "?", red = s === "H" || s === "D", col2 = red ? "#c8102e" : "#111";
    var rank = r === "T" ? "10" : r;
    return open +
      '<text x="6" y="19" font-size="' + (rank.length > 1 ? 14 : 17) + '" font-weight="700" fill="' + col2 +
      '" font-family="sans-serif">' + esc(rank) + "</text>" +
      '<text x="7" y="33" font-size="13" fill="' + col2 + '">' + sym + "</text>" +
      '<text x="33" y="62" font-size="34" text-anchor="middle" fill="' + col2 + '">' + sym + "</text>" +
      '<text x="54" y="80" font-size="12" font-weight="700" text-anchor="end" fill="' + col2 +
      '" font-family="sans-serif">' + esc(rank) + "</text></svg>";
  }
  function cardsHTML(cards, width) {
    return (cards || []).map(function (c) { return cardSVG(c, width); }).join("");
  }
  g.cardSVG = cardSVG;
  g.cardsHTML = cardsHTML;
})(window);
