// The live page of a ladder game (arena/ladder/site/live.py): server-sent events, public information only.
// Everything shown is set with textContent: nothing a bot or team chose is ever parsed as HTML.
"use strict";
(function () {
  const root = document.getElementById("live");
  if (!root) return;
  const gameId = root.dataset.game;
  const players = Number(root.dataset.players);
  const seatNames = players === 4 ? ["N", "E", "S", "W"] : ["A", "B"];
  const suits = { S: "♠", H: "♥", D: "♦", C: "♣" };
  const status = document.getElementById("live-status");
  const rows = Array.from(document.querySelectorAll("#live-seats tbody tr"));
  rows.forEach((row, seat) => { row.querySelector(".seat-name").textContent = seatNames[seat] || String(seat); });

  function card(text) {
    const span = document.createElement("span");
    const suit = text.charAt(0), rank = text.charAt(1) === "T" ? "10" : text.charAt(1);
    span.className = "card" + (suit === "H" || suit === "D" ? " red" : "");
    span.textContent = rank + (suits[suit] || suit);
    span.dataset.card = text;
    return span;
  }

  function show(message) {
    const view = message.view;
    rows.forEach((row, seat) => {
      const bid = view.bids[seat];
      row.querySelector(".bid").textContent = bid === undefined || bid < 0 ? "–" : (bid === 0 ? (view.blind[seat] ? "blind nil" : "nil") : String(bid));
      row.querySelector(".won").textContent = String(view.tricks_won[seat] || 0);
      const played = row.querySelector(".played");
      played.replaceChildren();
      const mine = view.current_trick.find((p) => p.seat === seat);
      if (mine) played.append(card(mine.card));
      row.classList.toggle("to-move", message.to_move === seat);
    });
    document.getElementById("live-hand").textContent =
      "Hand " + view.hand_number + (message.to_move >= 0 ? " · to play: " + seatNames[message.to_move] : "");
    document.getElementById("live-scores").textContent =
      "Scores at the start of this hand: " + view.scores.join(" – ") + " (bags " + view.bags.join(" – ") + ")";
    const last = document.getElementById("live-last");
    last.replaceChildren();
    if (view.tricks.length) {
      const trick = view.tricks[view.tricks.length - 1];
      last.append("Last trick (won by " + seatNames[trick.winner] + "): ");
      trick.cards.forEach((c) => { last.append(card(c), " "); });
    }
    status.textContent = "Live.";
  }

  const source = new EventSource("/live/" + encodeURIComponent(gameId) + "/events");
  source.onmessage = (event) => {
    let message;
    try { message = JSON.parse(event.data); } catch (e) { return; }
    if (message.type === "view") show(message);
    else if (message.type === "start") status.textContent = "The game is starting…";
    else if (message.type === "over" || message.type === "closed") {
      source.close();
      if (message.replay) {
        status.textContent = "The game is over: opening its replay…";
        window.location.assign(message.replay);
      } else {
        status.textContent = message.type === "closed" ? "The ladder stopped." : "The game ended without a record (void or stopped).";
      }
    }
  };
  source.onerror = () => { status.textContent = "Reconnecting…"; };
})();
