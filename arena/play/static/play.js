// The table page of `arena play` (arena/play/web.py): one WebSocket, the table's state pushed by the
// server, the person's answers sent back.  The felt (table.js) lays the other seats' cards down one
// at a time; the person's controls open once every card before their turn is down.  A push never
// takes the focus away: the controls are rebuilt only when the decision changes, the cards of the
// hand are updated in place, and a card that leaves the hand hands the focus to its neighbour.
// Every text from the server goes into the page with textContent (bot names are the bots' own).
"use strict";

(function () {
  const T = window.SpadesTable;
  const el = T.el;
  const body = document.body;
  const base = body.dataset.base;
  const $ = (id) => document.getElementById(id);

  let socket = null;
  let state = null;
  let felt = null;
  let takenOver = false;
  let retryMs = 500;
  let sentFor = null; // the request id answered (or withdrawn), until the server moves on
  let sentCard = null; // the card played with it (on the felt until the server's view has it)
  let focusedFor = null; // the request id whose first choice got the focus
  let confirming = null; // a nil or blind nil waiting to be confirmed: its action
  let receivedAt = 0;
  let compareChoice = null; // the bot picked to replay a hand with
  let announcedHands = new Set();
  let controlsKey = "";
  const sideKeys = {};
  const selected = new Set(); // exchange: the cards picked

  // ------------------------------------------------------------ words

  function seatLabel(seat) {
    return state.names[seat] + " (" + state.seat_names[seat] + ")";
  }

  function shortName(seat) {
    return seat === state.seat ? "You" : state.names[seat];
  }

  function sideNames() {
    const mine = state.seat % 2;
    const names = state.players === 2 ? ["You", "Opponent"] : ["You & partner", "Opponents"];
    return mine === 0 ? names : [names[1], names[0]];
  }

  function bidText(bid, blind) {
    if (bid === undefined || bid === null || bid < 0) return "no bid yet";
    if (bid === 0) return blind ? "blind nil" : "nil";
    return "bid " + bid;
  }

  function signed(n) {
    return n > 0 ? "+" + n : String(n);
  }

  function clockText(ms) {
    const s = Math.max(0, Math.ceil(ms / 1000));
    return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
  }

  function announce(text) {
    const box = $("announce");
    box.append(el("p", { text: text }));
    while (box.childNodes.length > 8) box.firstChild.remove();
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
      if (message.type === "state") received(message.state);
      else if (message.type === "refused") {
        sentFor = null;
        sentCard = null;
        $("message").textContent = message.message;
        controlsKey = "";
        if (state) render();
      } else if (message.type === "moved") {
        location.assign(base.replace(/[^/]+$/, encodeURIComponent(message.key)));
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

  function received(next) {
    state = next;
    receivedAt = performance.now();
    if (state.decision && state.decision.request_id !== sentFor) {
      sentFor = null;
      sentCard = null;
    }
    if (!state.decision) confirming = null;
    if (!state.decision || state.decision.kind !== "exchange") selected.clear();
    render();
  }

  function send(message) {
    if (!socket || socket.readyState !== WebSocket.OPEN) return false;
    socket.send(JSON.stringify(message));
    return true;
  }

  function answer(action) {
    const decision = state && state.decision;
    if (!ready() || !decision) return;
    if (!send({ type: "answer", request_id: decision.request_id, action: action })) return;
    sentFor = decision.request_id;
    sentCard = decision.kind === "play" ? action : null;
    confirming = null;
    $("message").textContent = "";
    if (decision.kind !== "play") felt.moveOn(); // a card of yours goes on the felt anyway
    render();
  }

  // ------------------------------------------------------------ what is ready

  // The person's decision is open, not answered yet, and every card before it is on the felt.
  function ready() {
    const decision = state && state.decision;
    return Boolean(decision && sentFor !== decision.request_id && felt && felt.idle());
  }

  function gameOverShown() {
    return Boolean(state.game_over && felt && felt.idle());
  }

  // The plays of the game as the page knows them: the server's, and the card just sent.
  function plays() {
    const entries = T.timeline(state.players, state.hands, state.view);
    const view = state.view;
    if (sentCard && view && !view.hand_over && !entries.some((e) => e.hand === view.hand_number && e.card === sentCard)) {
      const pos = view.current_trick.length;
      entries.push({ hand: view.hand_number, trick: view.tricks.length, pos: pos, seat: state.seat, card: sentCard, last: false, winner: -1 });
    }
    return entries;
  }

  // ------------------------------------------------------------ rendering

  function ensureFelt() {
    if (felt) return;
    felt = new T.Felt($("trick"), {
      players: state.players, bottom: state.seat, mine: state.seat, name: shortName, speed: T.savedSpeed(),
      waitForClick: T.savedWait(),
      announce: announce,
      emptyText: () => (state.view ? "" : "Waiting for the game to start…"),
      onIdle: () => render(true),
      onStep: () => { renderHeader(); renderSeats(); },
      onHandShown: handShown,
    });
    T.speedPicker($("speed"), felt);
    T.waitPicker($("wait-click"), felt);
  }

  let rendering = false;
  function render(fromFelt) {
    if (!state || rendering) return;
    rendering = true;
    try {
      ensureFelt();
      if (!fromFelt) felt.update(plays(), state.game_id);
      renderHeader();
      renderSeats();
      renderControls();
      renderSide();
      tickClock();
    } finally {
      rendering = false;
    }
    document.dispatchEvent(new CustomEvent("arena:rendered", { detail: state.version }));
  }

  // The scores and bags as far as the felt has shown: a hand still being laid down counts from its start.
  function shownTotals() {
    for (const hand of state.hands) {
      if (!felt.shownThrough(hand.number)) {
        return { scores: hand.teams.map((t) => t.score_before), bags: hand.teams.map((t) => t.bags_before) };
      }
    }
    return state.totals;
  }

  function renderHeader() {
    const rules = state.rules;
    $("rules").textContent = "Rules: " + rules.preset + ", " + rules.length +
      (state.games > 1 ? " · game " + (state.game_index + 1) + " of " + state.games : "");
    const scores = $("scores");
    scores.replaceChildren();
    const totals = shownTotals();
    const names = sideNames();
    const myTeam = state.seat % 2;
    for (let t = 0; t < 2; t++) {
      const bags = totals.bags[t];
      const near = rules.bag_penalty && bags >= rules.bag_threshold - 3;
      scores.append(el("span", {
        class: "score" + (t === myTeam ? " mine" : "") + (near ? " near-limit" : ""), "data-team": String(t),
        text: names[t] + " " + state.team_names[t] + ": " + totals.scores[t] + " (" + bags + (bags === 1 ? " bag)" : " bags)"),
      }));
    }
  }

  // The hand the seats' boxes describe: the one on the felt while cards are being laid, else the view's.
  function shownHandInfo() {
    const view = state.view;
    const handNo = felt.idle() || felt.shownHand() === null ? (view ? view.hand_number : null) : felt.shownHand();
    const finished = state.hands.find((h) => h.number === handNo);
    if (finished && !(view && view.hand_number === handNo && !view.hand_over)) {
      return { number: handNo, bids: finished.bids, blind: finished.blind, first: null };
    }
    return view ? { number: view.hand_number, bids: view.bids, blind: view.blind, first: view.first } : null;
  }

  function renderSeats() {
    for (const pos of ["top", "left", "right", "bottom"]) {
      const box = $("pos-" + pos);
      box.replaceChildren();
      box.hidden = true;
    }
    const info = shownHandInfo();
    const won = info ? felt.tricksWon(info.number) : [];
    const next = felt.idle() ? (ready() ? state.seat : null) : felt.nextSeat();
    for (let seat = 0; seat < state.players; seat++) {
      const box = $("pos-" + felt.position(seat));
      box.hidden = false;
      const bid = info ? info.bids[seat] : -1;
      const blind = info ? info.blind[seat] : false;
      const tricks = won[seat] || 0;
      box.classList.toggle("turn", next === seat);
      const dealer = info && info.first === seat;
      box.append(el("p", { class: "name", text: seatLabel(seat) }));
      box.append(el("p", { class: "line", text: bidText(bid, blind) + " · " + tricks + (tricks === 1 ? " trick" : " tricks") + (dealer ? (state.players === 4 ? " · dealer" : " · first") : "") }));
      if (next === seat) box.append(el("p", { class: "badge", text: seat === state.seat ? "your turn" : "to play" }));
    }
  }

  // ------------------------------------------------------------ your move

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

  function gameOverText(over) {
    const names = sideNames();
    const mine = state.seat % 2;
    const score = over.scores[mine] + " to " + over.scores[1 - mine];
    if (over.winner === null) return "Game over: a draw, " + score + ".";
    return "Game over: " + (over.you_won ? (state.players === 2 ? "you won" : "you and your partner won") : names[over.winner].toLowerCase() + " won") + ", " + score + ".";
  }

  function promptText() {
    const decision = state.decision;
    if (state.abandoned) return "The game was abandoned: no page was connected in time.";
    if (state.error) return state.error;
    if (ready()) return confirming !== null ? confirmPrompt(confirming) : decisionPrompt(decision);
    if (decision && sentFor === decision.request_id) return "Sent…";
    if (gameOverShown()) return gameOverText(state.game_over) + (state.game_over.last_of_match ? "" : " The next game starts…");
    if (state.finished) return "The match is over.";
    if (!state.view) return "Waiting for the bots to join…";
    return "The other players are playing…";
  }

  function confirmPrompt(action) {
    const rules = state.rules;
    if (action === "true") return "Blind nil: you bid to take no tricks, before seeing your cards (" + signed(rules.blind_nil_value) + " if you take none, " + signed(-rules.blind_nil_value) + " if you take one). Sure?";
    return "Nil: you bid to take no tricks (" + signed(rules.nil_value) + " if you take none, " + signed(-rules.nil_value) + " if you take one). Sure?";
  }

  function actionButton(label, action, extra, spoken) {
    const button = el("button", { type: "button", class: "action " + (extra || ""), text: label, "aria-label": spoken || null, "data-action": action });
    button.addEventListener("click", () => answer(action));
    return button;
  }

  function confirmButtons(action) {
    const yes = el("button", { type: "button", class: "action confirm", text: action === "true" ? "Yes, bid blind nil" : "Yes, bid nil", "data-action": action });
    yes.addEventListener("click", () => answer(action));
    const back = el("button", { type: "button", class: "action back", text: action === "true" ? "No, go back" : "No, choose another bid" });
    back.addEventListener("click", () => {
      confirming = null;
      controlsKey = "";
      renderControls();
    });
    return [yes, back];
  }

  function askConfirm(action) {
    confirming = action;
    controlsKey = "";
    renderControls();
  }

  function buildActions(decision) {
    const view = state.view;
    const actions = $("actions");
    actions.replaceChildren();
    if (confirming !== null) {
      actions.append(...confirmButtons(confirming));
      return;
    }
    if (decision.kind === "bid") {
      const group = el("div", { class: "bids", role: "group", "aria-label": "Bids" });
      for (const bid of decision.legal) {
        if (bid === "0") {
          const nil = el("button", { type: "button", class: "action bid nil", text: "Nil", "aria-label": "Bid nil (asks to confirm)", "data-action": "0" });
          nil.addEventListener("click", () => askConfirm("0"));
          group.append(nil);
        } else group.append(actionButton(bid, bid, "bid", "Bid " + bid));
      }
      actions.append(group);
    } else if (decision.kind === "blind_nil") {
      const blind = el("button", { type: "button", class: "action", text: "Bid blind nil", "data-action": "true", "aria-label": "Bid blind nil (asks to confirm)" });
      blind.addEventListener("click", () => askConfirm("true"));
      actions.append(actionButton("See my cards", "false"), blind);
    } else if (decision.kind === "draw") {
      if (view.offered_card) actions.append(T.cardFigure(view.offered_card, "offered"));
      actions.append(actionButton("Keep it", "keep"), actionButton("Discard it, take the next", "discard"));
      if (view.seen_discards.length) {
        actions.append(el("p", { class: "seen muted", text: "Seen going to the discards: " + view.seen_discards.map(T.cardWords).join(", ") }));
      }
    } else if (decision.kind === "exchange") {
      const picked = Array.from(selected);
      actions.append(actionButton(picked.length ? "Give back " + picked.length + (picked.length === 1 ? " card" : " cards") : "Give back no cards", picked.join(",")));
    }
  }

  function renderControls() {
    const decision = state.decision;
    const isReady = ready();
    $("prompt").textContent = promptText();
    body.classList.toggle("my-turn", isReady);
    body.dataset.request = isReady ? String(decision.request_id) : "";
    if (state.message) $("message").textContent = state.message;
    const key = isReady ? [decision.request_id, confirming, Array.from(selected).join(",")].join("|") : "";
    if (key !== controlsKey) {
      controlsKey = key;
      const hadFocus = $("actions").contains(document.activeElement);
      if (isReady) buildActions(decision);
      else $("actions").replaceChildren();
      if (hadFocus && !$("actions").contains(document.activeElement)) keepFocusInControls();
    }
    renderHand(isReady ? decision : null);
    renderTools(isReady);
    renderHint(isReady);
    renderGameOverControls();
    if (isReady) placeFocus(decision);
  }

  // At a new decision (or a confirmation), the focus goes to its first choice, unless the person is
  // elsewhere on the page (reading the results, the settings): then it stays there.
  function placeFocus(decision) {
    const want = focusTarget(decision);
    const mark = decision.request_id + "|" + confirming;
    if (!want || focusedFor === mark) return;
    focusedFor = mark;
    const active = document.activeElement;
    const free = !active || active === body || $("controls").contains(active) || $("trick").contains(active);
    if (!free) return;
    if (decision.kind === "play" && active && active.classList && active.classList.contains("legal")) return;
    want.focus();
  }

  function focusTarget(decision) {
    const actions = $("actions");
    if (confirming !== null) return actions.querySelector("button.back");
    if (decision.kind === "play" || decision.kind === "exchange") return $("hand").querySelector("button.card:not([aria-disabled='true'])");
    if (decision.kind === "bid") {
      return actions.querySelector('.bids button[data-action="' + decision.start + '"]') || actions.querySelector(".bids button:not(.nil)");
    }
    return actions.querySelector("button");
  }

  // The hand, updated in place: each card keeps its button (and so the focus).
  function renderHand(decision) {
    const hand = $("hand");
    const view = state.view;
    if (!view || view.hand_hidden) {
      hand.replaceChildren(el("p", { class: "muted", text: view ? "Your cards are face down until you decide." : "" }));
      return;
    }
    const playing = decision && decision.kind === "play";
    const exchanging = decision && decision.kind === "exchange";
    const legal = new Set(playing ? decision.legal : []);
    const cards = view.hand.filter((card) => card !== sentCard);
    const buttons = new Map(Array.from(hand.querySelectorAll("button.card")).map((b) => [b.dataset.card, b]));
    const active = document.activeElement;
    const focusedGone = active && hand.contains(active) && active.dataset.card && !cards.includes(active.dataset.card);
    const focusedIndex = focusedGone ? Array.from(hand.children).indexOf(active) : -1;
    const row = [];
    for (const card of cards) {
      const button = buttons.get(card) || newCardButton(card);
      const ok = playing ? legal.has(card) : Boolean(exchanging);
      button.className = "card" + (playing && ok ? " legal" : "") + (playing && !ok ? " unplayable" : "") + (selected.has(card) ? " picked" : "");
      button.setAttribute("aria-label", T.cardWords(card) + (playing && !ok ? " (cannot be played now)" : ""));
      if (ok) button.removeAttribute("aria-disabled");
      else button.setAttribute("aria-disabled", "true");
      if (exchanging) button.setAttribute("aria-pressed", String(selected.has(card)));
      else button.removeAttribute("aria-pressed");
      row.push(button);
    }
    // Only move what changed: a button moved in the DOM keeps its focus, but not in every browser.
    const current = Array.from(hand.children);
    if (current.length !== row.length || current.some((node, i) => node !== row[i])) hand.replaceChildren(...row);
    if (focusedGone) {
      const neighbour = row[Math.min(Math.max(0, focusedIndex), row.length - 1)];
      if (neighbour) neighbour.focus();
      else $("controls").focus();
    }
  }

  // The choice that had the focus is gone (answered): the focus waits on the hand (or the controls).
  function keepFocusInControls() {
    const card = $("hand").querySelector("button.card");
    if (card) card.focus();
    else $("controls").focus();
  }

  function newCardButton(card) {
    const button = el("button", { type: "button", class: "card", "data-card": card }, T.cardSvg(card));
    button.addEventListener("click", () => cardClicked(card, button));
    button.addEventListener("keydown", moveFocus);
    return button;
  }

  function cardClicked(card, button) {
    if (!ready()) {
      felt.skip();
      return;
    }
    const decision = state.decision;
    if (decision.kind === "exchange") {
      if (selected.has(card)) selected.delete(card);
      else if (selected.size < 3) selected.add(card);
      renderControls();
      button.focus();
    } else if (decision.kind === "play") {
      answer(card); // a card that is not legal is refused by the server, with the reason
    }
  }

  // Arrow keys move between the cards (the playable ones when it is your turn to play); Home/End.
  function moveFocus(event) {
    const keys = ["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Home", "End"];
    if (!keys.includes(event.key)) return;
    const all = Array.from($("hand").querySelectorAll("button.card"));
    const playable = all.filter((b) => b.getAttribute("aria-disabled") !== "true");
    const cards = playable.length && ready() ? playable : all;
    if (!cards.length) return;
    let i = cards.indexOf(event.currentTarget);
    if (event.key === "Home") i = 0;
    else if (event.key === "End") i = cards.length - 1;
    else if (event.key === "ArrowLeft" || event.key === "ArrowUp") i = (i - 1 + cards.length) % cards.length;
    else i = (i + 1) % cards.length;
    cards[i].focus();
    event.preventDefault();
  }

  // ------------------------------------------------------------ last trick, hint, undo

  function setEnabled(button, on) {
    if (on) button.removeAttribute("aria-disabled");
    else button.setAttribute("aria-disabled", "true");
  }

  function renderTools(isReady) {
    setEnabled($("last-trick"), Boolean(felt.previousTrick()));
    $("last-trick").setAttribute("aria-pressed", String(felt.peeking));
    const decision = state.decision;
    const hint = state.hint;
    setEnabled($("hint"), isReady && !(hint && hint.request_id === decision.request_id));
    const undo = $("undo");
    undo.hidden = !state.undo_available;
    setEnabled(undo, isReady && state.can_undo);
    const counts = state.assists || {};
    $("assisted").textContent = counts.hint || counts.undo
      ? "This game so far: " + (counts.hint || 0) + (counts.hint === 1 ? " hint, " : " hints, ") + (counts.undo || 0) + (counts.undo === 1 ? " undo" : " undos") + " (marked in its record)."
      : "";
  }

  function renderHint(isReady) {
    const box = $("hint-text");
    const hint = state.hint;
    for (const node of document.querySelectorAll(".suggested")) node.classList.remove("suggested");
    if (!hint || !isReady) {
      if (box.textContent) box.textContent = "";
      return;
    }
    let text;
    if (hint.status === "running") text = "Hard is thinking…";
    else if (hint.status === "failed") text = "No hint this time: " + hint.message;
    else {
      text = "Hint: " + hint.reason;
      const target = document.querySelector('#hand button[data-card="' + hint.action + '"], #actions button[data-action="' + hint.action + '"]');
      if (target) target.classList.add("suggested");
    }
    if (box.textContent !== text) box.textContent = text;
  }

  function askHint() {
    if (!ready() || $("hint").getAttribute("aria-disabled") === "true") return;
    send({ type: "hint", request_id: state.decision.request_id });
  }

  function askUndo() {
    if (!ready() || !state.can_undo) return;
    if (send({ type: "undo", request_id: state.decision.request_id })) {
      sentFor = state.decision.request_id;
      sentCard = null;
      render();
    }
  }

  function toggleLastTrick() {
    if (!felt.previousTrick()) return;
    felt.peek();
    renderTools(ready());
  }

  // ------------------------------------------------------------ the side: results

  function renderGameOverControls() {
    const box = $("game-over");
    const over = gameOverShown() ? state.game_over : null;
    const key = JSON.stringify([over, state.new_game, state.games_ended.length, state.finished]);
    if (sideKeys.over === key) return;
    sideKeys.over = key;
    const focused = box.contains(document.activeElement) ? document.activeElement.id : "";
    box.replaceChildren();
    if (over) {
      box.append(el("h2", { text: gameOverText(over) }));
      if (over.replay) box.append(el("p", {}, el("a", { href: base + "/" + over.replay, target: "_blank", rel: "noopener", text: "Watch the replay" })));
      const next = state.new_game;
      if (next && next.kind === "button") {
        const button = el("button", { id: "new-game", type: "button", class: "action", text: "New game" });
        button.addEventListener("click", () => send({ type: "new_game" }));
        box.append(button);
        // The game is over: the focus goes to "New game" if it was on the table's controls (or nowhere).
        const active = document.activeElement;
        if (focused === "new-game" || !active || active === body || $("controls").contains(active)) button.focus();
      } else if (next && next.kind === "link") {
        box.append(el("p", {}, el("a", { id: "new-game", href: next.href, text: "Open another table" })));
      }
    }
    const earlier = state.games_ended.filter((g) => !over || g.game_id !== over.game_id);
    for (const game of earlier) {
      const mine = state.seat % 2;
      const result = game.winner < 0 ? "a draw" : (game.winner === mine ? "won" : "lost");
      const line = el("p", { class: "muted", text: "Game " + game.game_id.split("-g").pop() + ": " + result + ", " + game.scores[mine] + " to " + game.scores[1 - mine] + " (" + game.ending + "). " });
      if (game.replay) line.append(el("a", { href: base + "/" + game.replay, target: "_blank", rel: "noopener", text: "Replay" }));
      box.append(line);
    }
  }

  function renderSide() {
    const shown = state.hands.filter((h) => felt.shownThrough(h.number));
    const hand = shown.length ? shown[shown.length - 1] : null;
    renderLastHand(hand);
    renderCompare(hand);
    renderSheet(shown);
    renderStats();
  }

  function handShown(number) {
    if (announcedHands.has(state.game_id + "#" + number)) return;
    announcedHands.add(state.game_id + "#" + number);
    const hand = state.hands.find((h) => h.number === number);
    if (!hand) return;
    const names = sideNames();
    const parts = hand.teams.map((t, i) => names[i] + " " + signed(t.points) + " (" + (t.made ? "made " : "set, ") + t.tricks + " of " + t.contract + ")");
    const mine = state.seat % 2;
    announce("Hand " + number + " over: " + parts.join(", ") + ". Score " + hand.teams[mine].score_after + " to " + hand.teams[1 - mine].score_after + ".");
    renderSide();
  }

  function renderLastHand(hand) {
    const box = $("last-hand");
    const key = JSON.stringify(hand ? [hand.number, state.game_id] : null);
    if (sideKeys.hand === key) return;
    sideKeys.hand = key;
    box.replaceChildren();
    if (!hand) {
      box.append(el("h2", { text: "Score" }), el("p", { class: "muted", text: "The breakdown of each hand appears here when it ends." }));
      return;
    }
    box.append(el("h2", { text: "Hand " + hand.number + ": the score" }));
    const table = el("table", { class: "breakdown" });
    const names = sideNames();
    const head = el("tr", {}, el("th", { scope: "col", text: "" }));
    hand.teams.forEach((team, t) => head.append(el("th", { scope: "col", text: names[t] + " " + team.name })));
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
    const details = el("details", { class: "hand-tricks" }, el("summary", { text: "The " + hand.tricks_played.length + " tricks of hand " + hand.number }));
    details.append(T.tricksTable(state.players, hand.tricks_played, shortName, "Hand " + hand.number + ", trick by trick"));
    box.append(details);
  }

  function renderSheet(shown) {
    const box = $("sheet");
    const key = JSON.stringify([state.game_id, shown.length]);
    if (sideKeys.sheet === key) return;
    sideKeys.sheet = key;
    box.replaceChildren(el("h2", { text: "Score sheet" }));
    if (!shown.length) {
      box.append(el("p", { class: "muted", text: "Each hand's bids, tricks, points and bags, as the game goes." }));
      return;
    }
    const names = sideNames();
    const mine = state.seat % 2;
    const order = [mine, 1 - mine];
    const table = el("table", { class: "sheet" });
    table.append(el("caption", { class: "muted", text: "Each cell: " + names[mine] + " · " + names[1 - mine] }));
    const head = el("tr", {}, ...["Hand", "Bid", "Tricks", "Points", "Score", "Bags"].map((h) => el("th", { scope: "col", text: h })));
    table.append(el("thead", {}, head));
    const tbody = el("tbody");
    const pair = (hand, f) => order.map((t) => f(hand.teams[t])).join(" · ");
    for (const hand of shown) {
      tbody.append(el("tr", {},
        el("th", { scope: "row", text: String(hand.number) }),
        el("td", { text: pair(hand, (t) => String(t.contract) + (t.nil.length ? "+nil" : "")) }),
        el("td", { text: pair(hand, (t) => String(t.tricks)) }),
        el("td", { text: pair(hand, (t) => signed(t.points)) }),
        el("td", { text: pair(hand, (t) => String(t.score_after)) }),
        el("td", { text: pair(hand, (t) => String(t.bags_after)) })));
    }
    table.append(tbody);
    box.append(table);
    const rules = state.rules;
    const last = shown[shown.length - 1];
    if (rules.bag_penalty) {
      order.forEach((t) => {
        const bags = last.teams[t].bags_after;
        if (bags >= rules.bag_threshold - 3) {
          box.append(el("p", { class: "warning", role: "note", text: names[t] + ": " + bags + " bags. At " + rules.bag_threshold + ", " + signed(-rules.bag_penalty) + " points." }));
        }
      });
    }
  }

  function renderStats() {
    const box = $("stats");
    const key = JSON.stringify([state.stats, state.stats_message]);
    if (sideKeys.stats === key) return;
    sideKeys.stats = key;
    box.replaceChildren();
    if (!state.stats) {
      if (state.stats_message) box.append(el("h2", { text: "Your statistics" }), el("p", { class: "message", text: state.stats_message }));
      return;
    }
    const s = state.stats;
    const pct = (x) => (x === null ? "–" : Math.round(x * 100) + "%");
    box.append(el("h2", { text: "Statistics of " + s.person }));
    const list = el("dl", { class: "stats" });
    const add = (term, value) => list.append(el("dt", { text: term }), el("dd", { text: value }));
    add("Games", s.games + " (" + s.won + " won)");
    add("Hands", String(s.hands));
    add("Exact bids", pct(s.bid_accuracy) + " (" + s.exact_bids + " of " + s.bids + "; off by " + (s.off_by === null ? "–" : s.off_by) + ")");
    add("Contracts made", pct(s.contracts_made));
    add("Nil", s.nils_made + " of " + s.nils + " made (" + pct(s.nil_success) + ")");
    add("Bags a hand", s.bags_per_hand === null ? "–" : String(s.bags_per_hand));
    add("Swing against Hard", s.swing_vs_hard === null ? "–" : signed(s.swing_vs_hard) + " a hand (" + s.swing_hands + " hands; + means Hard did better)");
    add("With a hint or undo", s.assisted_hands + " hands");
    box.append(list);
  }

  // ------------------------------------------------------------ the comparison

  function renderCompare(hand) {
    const box = $("compare");
    if (!state.compare_available) {
      box.replaceChildren();
      box.hidden = true;
      return;
    }
    box.hidden = false;
    const mine = hand ? state.comparisons.filter((c) => c.hand === hand.number) : [];
    const key = JSON.stringify([hand && hand.number, state.game_id, mine]);
    if (sideKeys.compare === key) return;
    sideKeys.compare = key;
    const focused = box.contains(document.activeElement) ? document.activeElement.id : "";
    box.replaceChildren();
    if (!hand) return;
    box.append(el("h2", { text: "How would a bot have played your cards?" }));
    if (!mine.length) box.append(el("p", { class: "muted", text: "Ask a bot below." }));
    for (const c of mine) box.append(comparisonItem(c, hand));
    const form = el("div", { class: "ask" });
    const pick = el("select", { id: "compare-bot", "aria-label": "Bot to replay the hand with" });
    for (const bot of state.compare_bots) pick.append(el("option", { value: bot, text: bot }));
    if (state.compare_bots.includes(compareChoice)) pick.value = compareChoice;
    pick.addEventListener("change", () => { compareChoice = pick.value; });
    const ask = el("button", { id: "compare-ask", type: "button", class: "action", text: "Replay hand " + hand.number + " with this bot" });
    ask.addEventListener("click", () => send({ type: "compare", game: state.game_index, hand: hand.number, bot: pick.value }));
    form.append(pick, ask);
    box.append(form);
    if (focused === "compare-bot") pick.focus();
    else if (focused === "compare-ask") ask.focus();
  }

  function comparisonItem(c, hand) {
    const name = c.bot.charAt(0).toUpperCase() + c.bot.slice(1);
    const item = el("div", { class: "comparison", "data-bot": c.bot, "data-status": c.status });
    if (c.status === "running") {
      item.append(el("p", { text: name + " is replaying hand " + c.hand + "…" }));
      return item;
    }
    if (c.status !== "done") {
      item.append(el("p", { text: name + ": " + (c.message || "could not replay the hand") }));
      return item;
    }
    item.append(el("p", { class: "verdict", text: name + ": " + bidText(c.bid, c.blind) + ", took " + c.tricks + "; its side " + signed(c.side_points) + " to " + signed(c.other_points) + ". You: " + bidText(hand.you.bid, hand.you.blind) + ", took " + hand.you.tricks + "; " + signed(hand.you.side_points) + " to " + signed(hand.you.other_points) + "." }));
    item.append(el("p", { class: "swing " + (c.swing > 0 ? "bot-better" : c.swing < 0 ? "you-better" : ""), text: "Swing: " + signed(c.swing) + (c.swing > 0 ? " for " + name : c.swing < 0 ? " for you" : " (the same)") }));
    if (c.explain && c.explain.length) {
      const list = el("ul", { class: "explain", "aria-label": "Where the swing came from" });
      for (const line of c.explain) list.append(el("li", { text: line }));
      item.append(list);
    }
    if (c.divergence) item.append(el("p", { class: "divergence", text: divergenceText(c.divergence, name) }));
    if (c.rows) item.append(rowsTable(c, name));
    return item;
  }

  function divergenceText(d, name) {
    if (d.at === "bid") return "First divergence: the bid (you " + bidText(d.yours, false) + ", " + name + " " + bidText(d.bot, false) + ").";
    if (d.at === "trick") return "First divergence: trick " + d.trick + " (you played the " + T.cardWords(d.yours) + ", " + name + " the " + T.cardWords(d.bot) + ").";
    return name + " played your cards exactly as you did.";
  }

  function rowsTable(c, name) {
    const table = el("table", { class: "compare-rows" });
    table.append(el("caption", { text: "Trick by trick: your card and " + name + "'s, from the same deal (★: the trick went to that side)" }));
    table.append(el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "#" }), el("th", { scope: "col", text: "You" }), el("th", { scope: "col", text: name }))));
    const tbody = el("tbody");
    const diverge = c.divergence && c.divergence.at === "trick" ? c.divergence.trick : c.divergence && c.divergence.at === "bid" ? 1 : null;
    for (const row of c.rows) {
      const cell = (side) => {
        const td = el("td");
        if (side && side.card) {
          td.append(T.cardFigure(side.card, "mini"));
          td.append(el("span", { class: "won", text: side.won ? " \u2605" : "" }));
        }
        return td;
      };
      const tr = el("tr", { class: row.number === diverge ? "diverge" : "" }, el("th", { scope: "row", text: String(row.number) + (row.number === diverge ? " (first divergence)" : "") }), cell(row.yours), cell(row.bot));
      tbody.append(tr);
    }
    table.append(tbody);
    return table;
  }

  // ------------------------------------------------------------ the clock

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

  // ------------------------------------------------------------ keys

  function onKey(event) {
    if (event.altKey || event.ctrlKey || event.metaKey || !state || !felt) return;
    const tag = event.target && event.target.tagName;
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
    const key = event.key;
    if ((key === " " || key === "Enter") && !felt.idle()) {
      felt.skip(); // a finished trick held, or cards still being laid: go on
      event.preventDefault();
    } else if (key === "l" || key === "L") {
      toggleLastTrick();
    } else if (key === "Escape" && felt.peeking) {
      felt.peek(false);
      renderTools(ready());
    } else if (key === "h" || key === "H") {
      askHint();
    } else if (key === "u" || key === "U") {
      askUndo();
    }
  }

  // ------------------------------------------------------------ start

  const four = $("four-colour");
  four.checked = localStorage.getItem("arena-four-colour") === "1";
  body.classList.toggle("four-colour", four.checked);
  four.addEventListener("change", () => {
    body.classList.toggle("four-colour", four.checked);
    localStorage.setItem("arena-four-colour", four.checked ? "1" : "0");
  });
  $("last-trick").addEventListener("click", toggleLastTrick);
  $("hint").addEventListener("click", askHint);
  $("undo").addEventListener("click", askUndo);
  document.addEventListener("keydown", onKey);
  setInterval(tickClock, 250);
  connect();
})();
