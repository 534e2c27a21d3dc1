// The felt table shared by the person's page (play.js) and a ladder's live page (the ladder's live.js):
// cards drawn as SVG, each seat at its side, and the cards played laid down one at a time (a speed
// setting, instant included), each finished trick held a moment (or until a click or a key) with its
// winner marked, a last-trick view, and every card and winner said in a live region.  Everything
// shown is set with textContent: nothing here builds HTML from strings.
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
  // Milliseconds before each other seat's card, and how long a finished trick is held.
  const SPEEDS = {
    instant: { card: 0, hold: 0 },
    fast: { card: 250, hold: 900 },
    normal: { card: 550, hold: 1800 },
    slow: { card: 1000, hold: 3200 },
  };
  const SPEED_KEY = "arena-speed";
  const WAIT_KEY = "arena-wait-for-click";

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

  // Each card is drawn once and cloned after, so a re-render stays cheap.  The SVG is hidden from
  // screen readers: its button or figure carries the words.
  const drawn = new Map();
  function cardSvg(card) {
    if (!drawn.has(card)) drawn.set(card, drawCard(card));
    return drawn.get(card).cloneNode(true);
  }

  function cardFigure(card, extra) {
    return el("span", { class: "card " + (extra || ""), role: "img", "aria-label": cardWords(card) }, cardSvg(card));
  }

  // ------------------------------------------------------------ the game's plays, in order

  // Every card played in a game so far, in order: finished hands' tricks, then the hand in play
  // (its finished tricks and the trick in progress).  Each entry: {hand, trick, pos, seat, card,
  // last (it completes its trick), winner (on the last card: who won the trick)}.
  function timeline(players, hands, view) {
    const out = [];
    const done = new Set();
    for (const hand of hands || []) {
      addTricks(out, players, hand.number, hand.tricks_played || [], null);
      done.add(hand.number);
    }
    if (view && !done.has(view.hand_number)) addTricks(out, players, view.hand_number, view.tricks || [], view.current_trick || []);
    return out;
  }

  function addTricks(out, players, hand, tricks, current) {
    tricks.forEach((t, i) => {
      t.cards.forEach((card, pos) => {
        const last = pos === players - 1;
        out.push({ hand: hand, trick: i, pos: pos, seat: (t.leader + pos) % players, card: card, last: last, winner: last ? t.winner : -1 });
      });
    });
    (current || []).forEach((p, pos) => {
      out.push({ hand: hand, trick: tricks.length, pos: pos, seat: p.seat, card: p.card, last: false, winner: -1 });
    });
  }

  function samePlace(a, b) {
    return a.hand === b.hand && a.trick === b.trick && a.pos === b.pos && a.card === b.card;
  }

  function samePlay(a, b) {
    return samePlace(a, b) && a.last === b.last && a.winner === b.winner;
  }

  // ------------------------------------------------------------ the felt

  // One table: `area` is the trick's element; options: players, bottom (the seat drawn at the
  // bottom), name(seat) -> its name, mine (the seat whose cards are laid at once: the person's),
  // speed, emptyText() (what the felt says with no card on it), announce(text), onIdle(), onStep(),
  // onHandShown(hand) (the last trick of a hand was laid down).
  class Felt {
    constructor(area, options) {
      this.area = area;
      this.o = options;
      this.target = [];
      this.count = 0;
      this.game = null;
      this.timer = null;
      this.holding = false;
      this.peeking = false;
      this.started = false;
      this.completedAt = null;
      this.dimTimer = null;
      this.waitForClick = Boolean(options.waitForClick);
      this.speed = SPEEDS[options.speed] ? options.speed : "normal";
      area.addEventListener("click", () => this.skip());
    }

    setSpeed(name) {
      if (!SPEEDS[name]) return;
      this.speed = name;
      if (name === "instant") this.finish();
    }

    position(seat) {
      const n = this.o.players;
      if (n === 2) return seat === this.o.bottom ? "bottom" : "top";
      return ["bottom", "left", "top", "right"][(seat - this.o.bottom + 4) % 4];
    }

    // The game's plays as they now stand: new ones are laid down in turn; a game that went back
    // (an undo) is shown as it is at once.  `game` names the game: a new one starts from its first card.
    update(entries, game) {
      const fresh = !this.started;
      this.started = true;
      if (game !== this.game) {
        this.game = game;
        this.stop();
        this.count = fresh ? entries.length : 0;
        this.target = entries;
      } else {
        // Where the felt stands in the new list: the last card it laid down.  The list may begin
        // later than the last one did (old hands are not sent again): places are matched, not indices.
        const last = this.count ? this.target[this.count - 1] : null;
        const at = last ? entries.findIndex((e) => samePlace(e, last)) : -1;
        this.target = entries;
        if (last && at < 0) {
          this.stop(); // that card is no longer played: the game went back (an undo), shown as it is now
          this.count = entries.length;
        } else if (last) {
          this.count = at + 1;
          // The same card, now known to end its trick (the person's own, sent before the server
          // had it): the trick is finished where it lies.
          if (!samePlay(entries[at], last) && entries[at].last) this.completed(entries[at]);
        }
      }
      this.render();
      this.pump();
    }

    idle() {
      return this.count >= this.target.length && this.timer === null;
    }

    // Lay the next card down after the speed's delay (at once for `mine`).  A finished trick stays
    // on the felt, its winner marked, for the speed's hold before the next trick's first card.
    pump() {
      if (this.timer !== null) return;
      if (this.count >= this.target.length) {
        if (this.o.onIdle) this.o.onIdle();
        return;
      }
      const next = this.target[this.count];
      const speed = SPEEDS[this.speed];
      let wait = next.seat === this.o.mine ? 0 : speed.card;
      const held = this.heldFor();
      if (next.seat !== this.o.mine && held === Infinity) {
        this.holding = true; // until a click or a key (skip)
        this.render();
        return;
      }
      if (next.seat !== this.o.mine && held > wait) {
        wait = held;
        this.holding = true;
      }
      this.timer = setTimeout(() => {
        this.timer = null;
        this.holding = false;
        this.step();
      }, wait);
    }

    // How much longer the finished trick on the felt is held (0 when none is, or its time is up).
    heldFor() {
      if (this.completedAt === null || !this.count || !this.target[this.count - 1].last) return 0;
      if (this.waitForClick) return Infinity;
      return Math.max(0, SPEEDS[this.speed].hold - (performance.now() - this.completedAt));
    }

    step() {
      const entry = this.target[this.count];
      this.count++;
      this.peeking = false;
      this.completedAt = null;
      if (this.o.announce) this.o.announce(this.o.name(entry.seat) + " plays the " + cardWords(entry.card) + ".");
      if (entry.last) this.completed(entry);
      this.render();
      if (this.o.onStep) this.o.onStep();
      this.pump();
    }

    // A trick is finished on the felt: its winner said, held for a moment, a hand's end told.
    completed(entry) {
      this.completedAt = performance.now();
      if (this.o.announce) this.o.announce(this.o.name(entry.winner) + " wins the trick.");
      this.dimLater();
      if (entry.trick === 12 && this.o.onHandShown) this.o.onHandShown(entry.hand);
    }

    // Draw the finished trick dimmed once its hold is over.
    dimLater() {
      clearTimeout(this.dimTimer);
      const left = this.heldFor();
      if (left > 0 && left !== Infinity) this.dimTimer = setTimeout(() => this.render(), left + 5);
    }

    // The person acted (a bid, a card): a trick finished before it is not held any longer.
    moveOn() {
      this.completedAt = null;
      if (this.holding && this.timer === null) this.skip();
    }

    setWaitForClick(on) {
      this.waitForClick = on;
      if (!on && this.holding && this.timer === null) this.skip();
    }

    // A click on the felt, or a key: end the hold at once (or lay every waiting card down).
    skip() {
      if (this.holding || (this.heldFor() > 0 && this.count < this.target.length)) {
        this.completedAt = null;
        this.stop();
        this.render();
        this.pump();
      } else if (this.timer !== null) {
        this.finish();
      }
    }

    finish() {
      this.stop();
      this.count = this.target.length;
      this.completedAt = null;
      this.render();
      if (this.o.onIdle) this.o.onIdle();
    }

    stop() {
      if (this.timer !== null) clearTimeout(this.timer);
      this.timer = null;
      this.holding = false;
    }

    // The trick on the felt: the one in progress, or the last finished one (held, then dimmed).
    shownTrick() {
      if (this.count === 0) return null;
      const lastShown = this.target[this.count - 1];
      const plays = this.target.slice(0, this.count).filter((e) => e.hand === lastShown.hand && e.trick === lastShown.trick);
      return { hand: lastShown.hand, trick: lastShown.trick, plays: plays, done: lastShown.last, winner: lastShown.winner };
    }

    // The last finished trick shown so far (the "last trick" view).
    previousTrick() {
      const shown = this.target.slice(0, this.count);
      const ends = shown.filter((e) => e.last);
      const end = ends[ends.length - 1];
      if (!end) return null;
      return { hand: end.hand, trick: end.trick, done: true, winner: end.winner,
               plays: shown.filter((e) => e.hand === end.hand && e.trick === end.trick) };
    }

    peek(on) {
      this.peeking = on === undefined ? !this.peeking : on;
      this.render();
      return this.peeking;
    }

    // Whether the last trick of `hand` has been laid down.
    shownThrough(hand) {
      if (this.target.length && hand < this.target[0].hand) return true; // before what the felt holds
      for (let i = 0; i < this.count; i++) {
        const e = this.target[i];
        if (e.hand === hand && e.trick === 12 && e.last) return true;
      }
      return false;
    }

    // The seat whose card comes next on the felt (null when every card known is down).
    nextSeat() {
      return this.count < this.target.length ? this.target[this.count].seat : null;
    }

    // The tricks each seat has won in the hand on the felt, as far as it has been shown.
    tricksWon(hand) {
      const won = new Array(this.o.players).fill(0);
      for (const e of this.target.slice(0, this.count)) if (e.hand === hand && e.last) won[e.winner] += 1;
      return won;
    }

    shownHand() {
      return this.count ? this.target[this.count - 1].hand : null;
    }

    render() {
      const area = this.area;
      area.replaceChildren();
      const trick = this.peeking ? this.previousTrick() : this.shownTrick();
      if (!trick) {
        if (this.o.emptyText) area.append(el("p", { class: "muted caption", text: this.o.emptyText() }));
        area.classList.remove("past", "held");
        return;
      }
      const held = !this.peeking && trick.done && this.heldFor() > 0;
      area.classList.toggle("past", (trick.done && !held) || this.peeking);
      area.classList.toggle("held", held);
      for (const play of trick.plays) {
        const won = trick.done && play.seat === trick.winner;
        const spot = el("div", { class: "spot at-" + this.position(play.seat) + (won ? " winner" : "") });
        spot.append(cardFigure(play.card));
        spot.append(el("span", { class: "who", text: this.o.name(play.seat) + (won ? " \u2605" : "") }));
        area.append(spot);
      }
      let caption = "";
      if (this.peeking) caption = "Last trick (" + (trick.trick + 1) + " of hand " + trick.hand + "): won by " + this.o.name(trick.winner);
      else if (trick.done) caption = "Won by " + this.o.name(trick.winner) + (this.holding ? " \u00b7 click or press Space to go on" : "");
      if (caption) area.append(el("p", { class: "caption", text: caption }));
      area.dataset.shown = String(this.count);
    }
  }

  // ------------------------------------------------------------ a hand's tricks, as a table

  function tricksTable(players, tricks, name, caption) {
    const table = el("table", { class: "tricks-table" });
    table.append(el("caption", { text: caption }));
    const head = el("tr", {}, el("th", { scope: "col", text: "#" }), el("th", { scope: "col", text: "Cards, in play order" }),
      el("th", { scope: "col", text: "Won by" }));
    table.append(el("thead", {}, head));
    const body = el("tbody");
    tricks.forEach((t, i) => {
      const cards = el("td", { class: "trick-cards" });
      t.cards.forEach((card, pos) => {
        const seat = (t.leader + pos) % players;
        cards.append(el("span", { class: "played" + (seat === t.winner ? " winner" : "") },
          cardFigure(card, "mini"), el("span", { class: "by", text: name(seat) })));
      });
      body.append(el("tr", {}, el("th", { scope: "row", text: String(i + 1) }), cards, el("td", { text: name(t.winner) })));
    });
    table.append(body);
    return table;
  }

  // ------------------------------------------------------------ speed, kept in the browser

  function savedSpeed() {
    const asked = new URLSearchParams(location.search).get("speed");
    if (asked && SPEEDS[asked]) return asked;
    const kept = localStorage.getItem(SPEED_KEY);
    return SPEEDS[kept] ? kept : "normal";
  }

  function speedPicker(select, felt) {
    select.value = felt.speed;
    select.addEventListener("change", () => {
      felt.setSpeed(select.value);
      localStorage.setItem(SPEED_KEY, select.value);
    });
  }

  // "Wait for a click after each trick": kept in the browser.
  function savedWait() {
    return localStorage.getItem(WAIT_KEY) === "1";
  }

  function waitPicker(box, felt) {
    box.checked = felt.waitForClick;
    box.addEventListener("change", () => {
      felt.setWaitForClick(box.checked);
      localStorage.setItem(WAIT_KEY, box.checked ? "1" : "0");
    });
  }

  window.SpadesTable = { el, cardWords, cardSvg, cardFigure, timeline, Felt, tricksTable, savedSpeed, speedPicker, savedWait, waitPicker, SPEEDS };
})();
