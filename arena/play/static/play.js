// The table page of `arena play` (arena/play/web.py): one WebSocket, the table's state pushed
// by the server, the person's answers sent back.  Every text from the server goes into the page
// with textContent (bot names are the bots' own), and nothing here builds HTML from strings.
"use strict";

(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const SUIT_NAMES = { S: "spades", H: "hearts", D: "diamonds", C: "clubs" };
  const SUIT_SYMBOL = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };
  const RANK_NAMES = { T: "10", J: "jack", Q: "queen", K: "king", A: "ace" };
  // Suit shapes drawn in a 100 x 100 box.
  const SUIT_PATHS = {
    S: "M50 6 C38 26 8 40 10 62 C12 80 36 84 46 68 L40 94 L60 94 L54 68 C64 84 88 80 90 62 C92 40 62 26 50 6 Z",
    H: "M50 92 C28 72 6 56 8 34 C10 14 36 8 50 30 C64 8 90 14 92 34 C94 56 72 72 50 92 Z",
    D: "M50 4 L86 50 L50 96 L14 50 Z",
    C: "M50 8 A20 20 0 0 1 68 38 A20 20 0 1 1 56 70 L62 94 L38 94 L44 70 A20 20 0 1 1 32 38 A20 20 0 0 1 50 8 Z",
  };
  const body = document.body;
  const base = body.dataset.base;
  const $ = (id) => document.getElementById(id);

  let socket = null;
  let state = null;
  let takenOver = false;
  let retryMs = 500;
  let sentFor = null; // the request id answered, until the server moves on
  let sentCard = null; // the card played with it (shown on the table until the server's view has it)
  let focusedFor = null; // the request id whose first action got the focus
  let receivedAt = 0;
  let compareChoice = null; // the bot picked to replay a hand with (the box is redrawn at every push)
  const selected = new Set(); // exchange: the cards picked

  // ------------------------------------------------------------ small helpers

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else if (value !== null && value !== undefined && value !== false) node.setAttribute(key, value === true ? "" : value);
    }
    for (const child of children) if (child) node.append(child);
    return node;
  }

  function cardWords(card) {
    if (!card || card.length !== 2) return String(card);
    return (RANK_NAMES[card[1]] || card[1]) + " of " + SUIT_NAMES[card[0]];
  }

  function rankText(card) {
    return card[1] === "T" ? "10" : card[1];
  }

  function suitPath(suit, x, y, size) {
    const path = document.createElementNS(SVG, "path");
    path.setAttribute("d", SUIT_PATHS[suit]);
    path.setAttribute("transform", "translate(" + x + " " + y + ") scale(" + size / 100 + ")");
    path.setAttribute("class", "pip");
    return path;
  }

  // A card drawn as SVG (hidden from screen readers: its button or figure carries the words);
  // each card is drawn once and cloned after, so a re-render stays cheap.
  const drawn = new Map();
  function cardSvg(card) {
    if (!drawn.has(card)) drawn.set(card, drawCard(card));
    return drawn.get(card).cloneNode(true);
  }

  function drawCard(card) {
    const svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("viewBox", "0 0 60 84");
    svg.setAttribute("aria-hidden", "true");
    svg.setAttribute("focusable", "false");
    svg.setAttribute("class", "card-face suit-" + card[0]);
    const rect = document.createElementNS(SVG, "rect");
    for (const [k, v] of Object.entries({ x: 1, y: 1, width: 58, height: 82, rx: 6, class: "paper" })) rect.setAttribute(k, v);
    svg.append(rect);
    const rank = document.createElementNS(SVG, "text");
    rank.setAttribute("x", 5);
    rank.setAttribute("y", 17);
    rank.setAttribute("class", "rank");
    rank.textContent = rankText(card);
    svg.append(rank);
    svg.append(suitPath(card[0], 5, 21, 13));
    svg.append(suitPath(card[0], 20, 36, 34));
    const corner = document.createElementNS(SVG, "text");
    corner.setAttribute("x", 55);
    corner.setAttribute("y", 79);
    corner.setAttribute("text-anchor", "end");
    corner.setAttribute("class", "rank small");
    corner.textContent = rankText(card) + SUIT_SYMBOL[card[0]];
    svg.append(corner);
    return svg;
  }

  function cardFigure(card, extra) {
    return el("span", { class: "card " + (extra || ""), role: "img", "aria-label": cardWords(card) }, cardSvg(card));
  }

  function seatLabel(seat) {
    return state.names[seat] + " (" + state.seat_names[seat] + ")";
  }

  function position(seat) {
    const n = state.players;
    if (n === 2) return seat === state.seat ? "bottom" : "top";
    return ["bottom", "left", "top", "right"][(seat - state.seat + 4) % 4];
  }

  function bidText(bid, blind) {
    if (bid === undefined || bid === null || bid < 0) return "no bid yet";
    if (bid === 0) return blind ? "blind nil" : "nil";
    return "bid " + bid;
  }

  function clockText(ms) {
    const s = Math.max(0, Math.ceil(ms / 1000));
    return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
  }

  // ------------------------------------------------------------ the connection

  function connect() {
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(scheme + location.host + base + "/ws");
    socket.addEventListener("open", () => {
      retryMs = 500;
      $("status").textContent = "Connected.";
    });
    socket.addEventListener("message", (event) => {
      let message;
      try {
        message = JSON.parse(event.data);
      } catch (e) {
        return;
      }
      if (message.type === "state") {
        state = message.state;
        receivedAt = performance.now();
        if (state.decision && state.decision.request_id !== sentFor) {
          sentFor = null;
          sentCard = null;
        }
        if (!state.decision || state.decision.kind !== "exchange") selected.clear();
        render();
        document.dispatchEvent(new CustomEvent("arena:rendered", { detail: state.version }));
      } else if (message.type === "refused") {
        sentFor = null;
        sentCard = null;
        $("message").textContent = message.message;
        if (state) render();
      } else if (message.type === "taken_over") {
        takenOver = true;
        $("status").textContent = "This table was opened in another tab or window: play there. This page is no longer connected.";
        body.classList.add("taken-over");
      }
    });
    socket.addEventListener("close", () => {
      if (takenOver) return;
      if (state && state.finished) {
        $("status").textContent = "The table has closed.";
        return;
      }
      $("status").textContent = "Connection lost: reconnecting…";
      setTimeout(connect, retryMs);
      retryMs = Math.min(5000, retryMs * 2);
    });
  }

  function answer(action) {
    const decision = state && state.decision;
    if (!decision || sentFor === decision.request_id || !socket || socket.readyState !== WebSocket.OPEN) return;
    sentFor = decision.request_id;
    sentCard = decision.kind === "play" ? action : null;
    $("message").textContent = "";
    socket.send(JSON.stringify({ type: "answer", request_id: decision.request_id, action: action }));
    render();
  }

  function askCompare(hand, bot) {
    if (!socket || socket.readyState !== WebSocket.OPEN) return;
    socket.send(JSON.stringify({ type: "compare", game: state.game_index, hand: hand, bot: bot }));
  }

  // ------------------------------------------------------------ rendering

  function render() {
    renderHeader();
    renderSeats();
    renderTrick();
    renderControls();
    renderSide();
    tickClock();
  }

  function renderHeader() {
    const rules = state.rules;
    $("rules").textContent =
      "Rules: " + rules.preset + (rules.target ? ", to " + rules.target : "") +
      (state.games > 1 ? " · game " + (state.game_index + 1) + " of " + state.games : "");
    const scores = $("scores");
    scores.replaceChildren();
    const view = state.view;
    const myTeam = state.seat % 2;
    for (let t = 0; t < 2; t++) {
      const who = state.players === 2 ? (t === state.seat ? "You" : "Opponent") : (t === myTeam ? "You & partner" : "Opponents");
      const score = view ? view.scores[t] : 0;
      const bags = view ? view.bags[t] : 0;
      scores.append(el("span", { class: "score" + (t === myTeam ? " mine" : ""), text: who + " " + state.team_names[t] + ": " + score + " (" + bags + " bags)" }));
    }
  }

  function renderSeats() {
    for (const pos of ["top", "left", "right", "bottom"]) {
      const box = $("pos-" + pos);
      box.replaceChildren();
      box.hidden = true;
    }
    const view = state.view;
    const decision = state.decision;
    for (let seat = 0; seat < state.players; seat++) {
      const box = $("pos-" + position(seat));
      box.hidden = false;
      const bid = view ? view.bids[seat] : -1;
      const blind = view ? view.blind[seat] : false;
      const won = view ? view.tricks_won[seat] : 0;
      const myTurn = seat === state.seat && decision;
      box.classList.toggle("turn", Boolean(myTurn));
      const dealer = view && view.first === seat;
      box.append(el("p", { class: "name", text: seatLabel(seat) }));
      box.append(el("p", { class: "line", text: bidText(bid, blind) + " · " + won + (won === 1 ? " trick" : " tricks") + (dealer ? (state.players === 4 ? " · dealer" : " · first") : "") }));
      if (myTurn) box.append(el("p", { class: "badge", text: "your turn" }));
    }
  }

  function renderTrick() {
    const area = $("trick");
    area.replaceChildren();
    const view = state.view;
    if (!view) {
      area.append(el("p", { class: "muted", text: "Waiting for the game to start…" }));
      return;
    }
    let plays = view.current_trick.slice();
    const played = state.just_played || (sentCard && { seat: state.seat, card: sentCard });
    if (played && !plays.some((p) => p.card === played.card)) plays.push(played);
    let caption = "";
    const lastHand = state.hands.length ? state.hands[state.hands.length - 1] : null;
    if (!plays.length) {
      if (view.tricks.length) {
        const last = view.tricks[view.tricks.length - 1];
        plays = last.cards.map((card, i) => ({ seat: (last.leader + i) % state.players, card: card }));
        caption = "Last trick: won by " + seatLabel(last.winner);
      } else if (lastHand && lastHand.last_trick && lastHand.number === view.hand_number - 1 && !view.bids.some((b) => b >= 0)) {
        const last = lastHand.last_trick;
        plays = last.cards.map((card, i) => ({ seat: (last.leader + i) % state.players, card: card }));
        caption = "Last trick of hand " + lastHand.number;
      }
    }
    area.classList.toggle("past", Boolean(caption));
    for (const play of plays) {
      const spot = el("div", { class: "spot at-" + position(play.seat) });
      spot.append(cardFigure(play.card));
      spot.append(el("span", { class: "who", text: state.names[play.seat] }));
      area.append(spot);
    }
    if (caption) area.append(el("p", { class: "caption", text: caption }));
  }

  function decisionPrompt(decision) {
    switch (decision.kind) {
      case "play": return "Your turn: play a card.";
      case "bid": return "Your bid: how many tricks will you take?";
      case "blind_nil": return "Bid blind nil, before seeing your cards?";
      case "draw": return "Keep this card, or discard it and take the next?";
      case "exchange": return "Blind nil: choose up to 3 cards to give back.";
      default: return "Your turn.";
    }
  }

  function actionButton(label, action, extra, spoken) {
    const button = el("button", { type: "button", class: "action " + (extra || ""), text: label, "aria-label": spoken || null });
    button.addEventListener("click", () => answer(action));
    return button;
  }

  function renderControls() {
    const decision = state.decision;
    const view = state.view;
    const waiting = decision && sentFor === decision.request_id;
    const actions = $("actions");
    actions.replaceChildren();
    let prompt;
    if (state.abandoned) prompt = "The game was abandoned: no page was connected in time.";
    else if (state.error) prompt = state.error;
    else if (state.finished) prompt = "The match is over.";
    else if (!decision) prompt = view ? "The other players are playing…" : "Waiting for the bots to join…";
    else if (waiting) prompt = "Sent…";
    else prompt = decisionPrompt(decision);
    $("prompt").textContent = prompt;
    body.classList.toggle("my-turn", Boolean(decision && !waiting));
    body.dataset.request = decision && !waiting ? String(decision.request_id) : "";
    if (state.message) $("message").textContent = state.message;

    if (decision && !waiting) {
      if (decision.kind === "bid") {
        const group = el("div", { class: "bids", role: "group", "aria-label": "Bids" });
        for (const bid of decision.legal) group.append(actionButton(bid === "0" ? "Nil" : bid, bid, "bid", bid === "0" ? "Bid nil" : "Bid " + bid));
        actions.append(group);
      } else if (decision.kind === "blind_nil") {
        actions.append(actionButton("Bid blind nil", "true"), actionButton("See my cards", "false"));
      } else if (decision.kind === "draw") {
        if (view.offered_card) actions.append(cardFigure(view.offered_card, "offered"));
        actions.append(actionButton("Keep it", "keep"), actionButton("Discard it, take the next", "discard"));
        if (view.seen_discards.length) {
          actions.append(el("p", { class: "seen muted", text: "Seen going to the discards: " + view.seen_discards.map(cardWords).join(", ") }));
        }
      } else if (decision.kind === "exchange") {
        const picked = Array.from(selected);
        actions.append(actionButton(picked.length ? "Give back " + picked.length + (picked.length === 1 ? " card" : " cards") : "Give back no cards", picked.join(",")));
      }
    }
    renderHand(decision, waiting);
    const first = focusTarget(decision, waiting);
    if (first && focusedFor !== decision.request_id) {
      focusedFor = decision.request_id;
      const active = document.activeElement;
      if (!active || active === body || $("controls").contains(active)) first.focus();
    }
  }

  function renderHand(decision, waiting) {
    const hand = $("hand");
    const active = document.activeElement;
    const focusedCard = active && active.dataset ? active.dataset.card : null;
    hand.replaceChildren();
    const view = state.view;
    if (!view) return;
    if (view.hand_hidden) {
      hand.append(el("p", { class: "muted", text: "Your cards are face down until you decide." }));
      return;
    }
    const playing = decision && !waiting && decision.kind === "play";
    const exchanging = decision && !waiting && decision.kind === "exchange";
    const legal = new Set(playing ? decision.legal : []);
    for (const card of view.hand) {
      if (card === sentCard || (state.just_played && card === state.just_played.card)) continue; // on the table now
      const ok = playing ? legal.has(card) : exchanging;
      let label = cardWords(card);
      if (playing) label += ok ? "" : " (cannot be played now)";
      const button = el("button", {
        type: "button",
        class: "card" + (playing && ok ? " legal" : "") + (selected.has(card) ? " picked" : ""),
        "aria-label": label,
        "data-card": card,
        disabled: !ok,
        "aria-pressed": exchanging ? String(selected.has(card)) : null,
      }, cardSvg(card));
      button.addEventListener("click", () => {
        if (exchanging) {
          if (selected.has(card)) selected.delete(card);
          else if (selected.size < 3) selected.add(card);
          renderControls();
          const again = hand.querySelector('[data-card="' + card + '"]');
          if (again) again.focus();
        } else {
          answer(card);
        }
      });
      button.addEventListener("keydown", moveFocus);
      hand.append(button);
    }
    if (focusedCard) {
      const again = hand.querySelector('[data-card="' + focusedCard + '"]');
      if (again && !again.disabled) again.focus();
    }
  }

  function focusTarget(decision, waiting) {
    if (!decision || waiting) return null;
    if (decision.kind === "play" || decision.kind === "exchange") return $("hand").querySelector("button:not([disabled])");
    return $("actions").querySelector("button");
  }

  // Arrow keys move between the cards that can be played (Home/End: the first and the last).
  function moveFocus(event) {
    const keys = ["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Home", "End"];
    if (!keys.includes(event.key)) return;
    const cards = Array.from($("hand").querySelectorAll("button:not([disabled])"));
    if (!cards.length) return;
    let i = cards.indexOf(event.currentTarget);
    if (event.key === "Home") i = 0;
    else if (event.key === "End") i = cards.length - 1;
    else if (event.key === "ArrowLeft" || event.key === "ArrowUp") i = (i - 1 + cards.length) % cards.length;
    else i = (i + 1) % cards.length;
    cards[i].focus();
    event.preventDefault();
  }

  function renderSide() {
    renderGameOver();
    renderLastHand();
    renderCompare();
  }

  function renderGameOver() {
    const box = $("game-over");
    box.replaceChildren();
    for (const game of state.games_ended) {
      const n = state.players;
      const winner = game.winner < 0 ? "a draw" : (game.winner === state.seat % 2 ? "you won" : "you lost");
      box.append(el("h2", { text: "Game " + game.game_id.split("-g").pop() + " over: " + winner }));
      box.append(el("p", { text: state.team_names[0] + " " + game.scores[0] + ", " + state.team_names[1] + " " + game.scores[1] + " (" + game.ending + ")" }));
      if (game.replay) box.append(el("p", {}, el("a", { href: base + "/" + game.replay, target: "_blank", rel: "noopener", text: "Watch the replay" })));
      void n;
    }
  }

  function renderLastHand() {
    const box = $("last-hand");
    box.replaceChildren();
    const hand = state.hands.length ? state.hands[state.hands.length - 1] : null;
    if (!hand) {
      box.append(el("h2", { text: "Score" }), el("p", { class: "muted", text: "The breakdown of each hand appears here when it ends." }));
      return;
    }
    box.append(el("h2", { text: "Hand " + hand.number + ": the score" }));
    const table = el("table", { class: "breakdown" });
    const head = el("tr", {}, el("th", { scope: "col", text: "" }));
    for (const team of hand.teams) head.append(el("th", { scope: "col", text: team.name }));
    table.append(el("thead", {}, head));
    const rows = [
      ["Bid", (t) => String(t.contract)],
      ["Tricks", (t) => String(t.tricks)],
      ["Contract", (t) => signed(t.contract_points) + (t.made ? "" : " (set)")],
      ["Bags", (t) => t.bags + " (" + signed(t.bag_points) + ")"],
      ["Nil", (t) => t.nil.length ? t.nil.map((x) => (x.kind === "blind_nil" ? "blind nil " : "nil ") + (x.made ? "made " : "failed ") + signed(x.points)).join(", ") : "—"],
      ["Bag penalty", (t) => t.penalty_points ? signed(t.penalty_points) : "—"],
      ["Hand", (t) => signed(t.points)],
      ["Score", (t) => t.score_after + " (" + t.bags_after + " bags)"],
    ];
    const tbody = el("tbody");
    for (const [label, value] of rows) {
      const row = el("tr", {}, el("th", { scope: "row", text: label }));
      for (const team of hand.teams) row.append(el("td", { text: value(team) }));
      tbody.append(row);
    }
    table.append(tbody);
    box.append(table);
  }

  function signed(n) {
    return n > 0 ? "+" + n : String(n);
  }

  function renderCompare() {
    const box = $("compare");
    const focused = box.contains(document.activeElement) ? document.activeElement.id : "";
    box.replaceChildren();
    const hand = state.hands.length ? state.hands[state.hands.length - 1] : null;
    if (!hand) return;
    box.append(el("h2", { text: "How would a bot have played your cards?" }));
    const mine = state.comparisons.filter((c) => c.hand === hand.number);
    if (!mine.length) box.append(el("p", { class: "muted", text: "Ask a bot below." }));
    for (const c of mine) {
      const name = c.bot.charAt(0).toUpperCase() + c.bot.slice(1);
      const item = el("div", { class: "comparison", "data-bot": c.bot, "data-status": c.status });
      if (c.status === "running") item.append(el("p", { text: name + " is replaying hand " + c.hand + "…" }));
      else if (c.status === "done") {
        item.append(el("p", { class: "verdict", text: name + ": " + bidText(c.bid, c.blind) + ", took " + c.tricks + "; its side " + signed(c.side_points) + " to " + signed(c.other_points) + ". You: " + bidText(hand.you.bid, hand.you.blind) + ", took " + hand.you.tricks + "; " + signed(hand.you.side_points) + " to " + signed(hand.you.other_points) + "." }));
        item.append(el("p", { class: "swing " + (c.swing > 0 ? "bot-better" : c.swing < 0 ? "you-better" : ""), text: "Swing: " + signed(c.swing) + (c.swing > 0 ? " for " + name : c.swing < 0 ? " for you" : " (the same)") }));
        const row = el("div", { class: "mini-cards", role: "group", "aria-label": name + "'s cards in play order" });
        for (const card of c.cards) row.append(cardFigure(card, "mini"));
        item.append(row);
      } else item.append(el("p", { text: name + ": " + (c.message || "could not replay the hand") }));
      box.append(item);
    }
    const form = el("div", { class: "ask" });
    const pick = el("select", { id: "compare-bot", "aria-label": "Bot to replay the hand with" });
    for (const bot of state.compare_bots) pick.append(el("option", { value: bot, text: bot }));
    // The box is drawn again at every push: keep the person's choice (and focus) across it.
    if (state.compare_bots.includes(compareChoice)) pick.value = compareChoice;
    pick.addEventListener("change", () => { compareChoice = pick.value; });
    const ask = el("button", { id: "compare-ask", type: "button", class: "action", text: "Replay hand " + hand.number + " with this bot" });
    ask.addEventListener("click", () => askCompare(hand.number, pick.value));
    form.append(pick, ask);
    box.append(form);
    if (focused === "compare-bot") pick.focus();
    else if (focused === "compare-ask") ask.focus();
  }

  function tickClock() {
    const clock = $("clock");
    const decision = state && state.decision;
    if (!decision || sentFor === decision.request_id) {
      clock.textContent = "";
      return;
    }
    const elapsed = decision.elapsed_ms + (performance.now() - receivedAt);
    const move = decision.move_ms - elapsed;
    const bank = decision.bank_ms - Math.max(0, elapsed - decision.move_ms);
    clock.textContent = "Clock " + clockText(Math.max(0, move)) + " · bank " + clockText(bank);
    clock.classList.toggle("low", decision.allowed_ms - elapsed < 15000);
  }

  // ------------------------------------------------------------ start

  const four = $("four-colour");
  four.checked = localStorage.getItem("arena-four-colour") === "1";
  body.classList.toggle("four-colour", four.checked);
  four.addEventListener("change", () => {
    body.classList.toggle("four-colour", four.checked);
    localStorage.setItem("arena-four-colour", four.checked ? "1" : "0");
  });
  setInterval(tickClock, 250);
  connect();
})();
