// The live page of a ladder game (arena/ladder/site/live.py): server-sent events, public information
// only, on arena play's felt (table.js): each card laid down in turn, each trick's winner marked and
// held a moment, the last trick of every hand shown (a view carries the hand before it, whole), the
// last trick on demand (L).  Everything shown is set with textContent.
"use strict";
(function () {
  const root = document.getElementById("live");
  if (!root || !window.SpadesTable) return;
  const T = window.SpadesTable;
  const gameId = root.dataset.game;
  const players = Number(root.dataset.players);
  const seatNames = players === 4 ? ["N", "E", "S", "W"] : ["A", "B"];
  const status = document.getElementById("live-status");
  const seats = Array.from(document.querySelectorAll("#live-felt .seat"));
  const names = seats.map((box, seat) => box.querySelector(".name").textContent + " (" + seatNames[seat] + ")");
  const hands = new Map(); // hand number -> its tricks, once over: the felt's history
  let latest = null;

  function announce(text) {
    const box = document.getElementById("announce");
    box.append(T.el("p", { text: text }));
    while (box.childNodes.length > 8) box.firstChild.remove();
  }

  const felt = new T.Felt(document.getElementById("trick"), {
    players: players, bottom: players === 4 ? 2 : 0, mine: -1, name: (seat) => names[seat] || String(seat),
    speed: T.savedSpeed(), announce: announce, onStep: drawSeats, onIdle: drawSeats,
  });
  T.speedPicker(document.getElementById("speed"), felt);
  seats.forEach((box, seat) => box.classList.add("at-" + felt.position(seat)));

  function drawSeats() {
    if (!latest) return;
    const view = latest.view;
    const number = felt.shownHand() || view.hand_number;
    const won = felt.tricksWon(number);
    const next = felt.idle() ? latest.to_move : felt.nextSeat();
    const before = latest.previous_hand;
    const shown = number !== view.hand_number && before && before.hand_number === number ? before : view;
    seats.forEach((box, seat) => {
      const bid = number === shown.hand_number ? shown.bids[seat] : null;
      const said = bid === null || bid === undefined || bid < 0 ? "–" : (bid === 0 ? (shown.blind[seat] ? "blind nil" : "nil") : "bid " + bid);
      box.querySelector(".line").textContent = said + " · " + won[seat] + (won[seat] === 1 ? " trick" : " tricks");
      box.classList.toggle("turn", next === seat);
    });
    document.getElementById("live-hand").textContent = "Hand " + number + (next !== null && next >= 0 ? " · to play: " + seatNames[next] : "");
    document.getElementById("live-scores").textContent =
      "Scores at the start of hand " + view.hand_number + ": " + view.scores.join(" – ") + " (bags " + view.bags.join(" – ") + ")";
    const last = document.getElementById("last-trick");
    if (felt.previousTrick()) last.removeAttribute("aria-disabled");
    else last.setAttribute("aria-disabled", "true");
    last.setAttribute("aria-pressed", String(felt.peeking));
  }

  function show(message) {
    latest = message;
    const before = message.previous_hand;
    if (before) hands.set(before.hand_number, before.tricks);
    const finished = Array.from(hands.entries()).sort((a, b) => a[0] - b[0])
      .filter(([number]) => number < message.view.hand_number)
      .map(([number, tricks]) => ({ number: number, tricks_played: tricks }));
    felt.update(T.timeline(players, finished, message.view), gameId);
    drawSeats();
    status.textContent = "Live.";
  }

  function toggleLast() {
    if (!felt.previousTrick()) return;
    felt.peek();
    drawSeats();
  }
  document.getElementById("last-trick").addEventListener("click", toggleLast);
  document.addEventListener("keydown", (event) => {
    const tag = event.target && event.target.tagName;
    if (event.altKey || event.ctrlKey || event.metaKey || tag === "INPUT" || tag === "SELECT") return;
    if (event.key === "l" || event.key === "L") toggleLast();
    else if (event.key === " " && !felt.idle()) { felt.skip(); event.preventDefault(); }
  });

  const source = new EventSource("/live/" + encodeURIComponent(gameId) + "/events");
  source.onmessage = (event) => {
    let message;
    try { message = JSON.parse(event.data); } catch (e) { return; }
    if (message.type === "view") show(message);
    else if (message.type === "start") {
      status.textContent = "The game is starting…";
      felt.update([], gameId); // watched from its start: every card will be laid down, none skipped
    }
    else if (message.type === "over" || message.type === "closed") {
      source.close();
      if (message.last) show({ ...message.last, to_move: -1 }); // the end of the last hand, on the felt
      if (message.replay) {
        status.textContent = "The game is over: opening its replay…";
        // The last cards are laid down first.
        const leave = () => (felt.idle() ? window.location.assign(message.replay) : setTimeout(leave, 200));
        leave();
      } else {
        status.textContent = message.type === "closed" ? "The ladder stopped." : "The game ended without a record (void or stopped).";
      }
    }
  };
  source.onerror = () => { status.textContent = "Reconnecting…"; };
})();
