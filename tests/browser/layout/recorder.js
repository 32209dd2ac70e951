// Installed in a player's table page by record.py: after every change of the page (a drawing of the
// table, a clock tick) it scores the moments the layout matrix needs and, when one beats the best
// seen so far, saves the table's model (the page's own pagehide handler writes localStorage) and
// keeps what it wrote. Scores are computed from the drawing, so the saved model is the one drawn.
// window.__rec: {best: {moment: {score, stored}}, turns: how many own decisions were seen}.
(game) => {
  const rec = { best: {}, turns: 0, mine: false };
  window.__rec = rec;
  const all = (sel) => [...document.querySelectorAll(sel)];
  const key = () => "cardhall.table." + location.hash.replace(/^#\/t\//, "").replace(/\/watch$/, "");
  const keep = (moment, score) => {
    const old = rec.best[moment];
    if (old && old.score >= score) return;
    dispatchEvent(new Event("pagehide")); // table.js saves its model at once
    rec.best[moment] = { score, stored: localStorage.getItem(key()) };
  };
  const look = () => {
    if (!document.querySelector(".table-page .felt")) return;
    const seats = all(".felt > .seat");
    const tall = seats.reduce((s, e) => s + e.getBoundingClientRect().height, 0);
    const bets = all(".felt .seat .bet").length;
    const badges = all(".felt .seat .badge").length;
    const plays = all(".center .avalanche-plays .play").length;
    const mine = Boolean(document.querySelector(".action-panel.mine [data-action]:not([data-action=continue])"));
    if (mine && !rec.mine) rec.turns += 1;
    rec.mine = mine;
    if (mine) {
      const amount = document.querySelector(".action-panel input[type=number]") ? 1e6 : 0;
      const presets = document.querySelector(".action-panel .preset") ? 1e5 : 0;
      const clock = document.querySelector(".seat .clock:not([hidden])") ? 1e4 : 0;
      keep("turn", amount + presets + clock + plays * 50 + bets * 40 + badges * 10 + tall);
    }
    const other = document.querySelector(".felt > .seat.to-act:not(.me)");
    if (!mine && other) {
      const boxes = all(".action-panel .preactions input").length;
      keep("waiting", boxes * 1e5 + bets * 40 + badges * 10 + tall);
    }
    if (game === "avalanche") {
      const won = all(".felt .seat .won, .felt .seat .stopped").length;
      if (plays) keep("showdown", plays * 1000 + won * 500 + tall);
    } else if (document.querySelector(".center .hand-result")) {
      const shown = all(".felt > .seat:not(.me) .seat-cards .card:not(.back)").length;
      const won = all(".felt .seat .won, .felt .seat .ko").length;
      keep("showdown", shown * 1000 + won * 300 + badges * 10 + tall);
    }
    const verdict = document.querySelector(".result-banner .verdict");
    if (document.querySelector(".result-banner") && verdict && verdict.dataset.status !== "checking") keep("ended", 1);
  };
  new MutationObserver(look).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
  look();
}
