/* The replay viewer: draws steps computed in Python by the rules engine
 * (arena/publish/steps.py).  It knows no rule of Spades: every state it shows,
 * and what each seat may see, comes from the data.  Untrusted text (bot names,
 * versions, referee details) is only ever set with textContent.
 */
(function () {
  "use strict";

  var SUITS = "CDHS";
  var RANKS = "23456789TJQKA";
  var SYMBOL = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };

  function cardName(i) { return SUITS[Math.floor(i / 13)] + RANKS[i % 13]; }

  /* A 52-bit hex mask to card indices (two halves: JS bit operations are 32-bit). */
  function maskCards(hex) {
    var out = [];
    if (!hex) return out;
    var big = hex.length > 7 ? parseInt(hex.slice(0, hex.length - 7), 16) : 0;
    var low = parseInt(hex.slice(-7), 16);
    for (var i = 0; i < 28; i++) if ((low >>> i) & 1) out.push(i);
    for (var j = 0; j < 24; j++) if ((big >>> j) & 1) out.push(28 + j);
    return out;
  }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function cardEl(i, extra) {
    var name = cardName(i);
    var e = el("span", "card face s-" + name[0] + (extra ? " " + extra : ""));
    e.setAttribute("data-card", name);
    e.appendChild(el("span", "rank", name[1] === "T" ? "10" : name[1]));
    e.appendChild(el("span", "suit", SYMBOL[name[0]]));
    e.title = name;
    return e;
  }

  function backEl() { var e = el("span", "card back"); e.setAttribute("data-back", ""); return e; }

  function cardsEl(cls, cards) {
    var span = el("span", cls);
    cards.forEach(function (c) { span.appendChild(cardEl(c, "inline")); });
    return span;
  }

  /* Rebuild full states from the per-step changes (a plain merge, no rules). */
  function expand(steps) {
    var out = [], cur = {};
    steps.forEach(function (delta) {
      var next = {};
      Object.keys(cur).forEach(function (k) { next[k] = cur[k]; });
      Object.keys(delta).forEach(function (k) { next[k] = delta[k]; });
      out.push(next);
      cur = next;
    });
    return out;
  }

  function Viewer(root, data, options) {
    this.root = root;
    this.data = data;
    this.steps = expand(data.steps);
    this.n = data.players;
    this.index = 0;
    this.seat = "all";
    this.timer = null;
    this.options = options || {};
    this.build();
  }

  Viewer.prototype.seatLabel = function (s) {
    var info = this.data.names[s] || {};
    return this.data.seats[s] + (info.name ? " \u00b7 " + info.name : "");
  };

  Viewer.prototype.build = function () {
    var self = this, d = this.data, root = this.root;
    root.textContent = "";
    root.classList.add("viewer");
    var head = el("div", "head");
    head.appendChild(el("h1", "title", "Game " + (d.game_id || "") + (d.match_id ? " (match " + d.match_id + ")" : "")));
    var names = d.seats.map(function (s, k) {
      var info = d.names[k] || {};
      return s + ": " + (info.name || "?") + (info.version ? " " + info.version : "");
    }).join(" \u00b7 ");
    head.appendChild(el("p", "meta", "Ruleset " + d.rules.preset + " (" + d.ruleset_hash + ") \u00b7 " + names));
    root.appendChild(head);

    var c = el("div", "controls");
    function button(id, text, title, fn) {
      var b = el("button", "ctl-" + id, text);
      b.type = "button";
      b.title = title;
      b.setAttribute("data-control", id);
      b.addEventListener("click", fn);
      c.appendChild(b);
      return b;
    }
    button("first", "|\u00ab", "first step (Home)", function () { self.go(0); });
    button("prev-hand", "\u00ab hand", "previous hand (PageUp)", function () { self.prevHand(); });
    button("prev-trick", "\u2039 trick", "previous trick (Up)", function () { self.prevTrick(); });
    button("prev", "\u2190 card", "previous card or decision (Left)", function () { self.go(self.index - 1); });
    this.playButton = button("play", "\u25b6 play", "play / pause (Space)", function () { self.toggle(); });
    button("next", "card \u2192", "next card or decision (Right)", function () { self.go(self.index + 1); });
    button("next-trick", "trick \u203a", "next trick (Down)", function () { self.nextTrick(); });
    button("next-hand", "hand \u00bb", "next hand (PageDown)", function () { self.nextHand(); });
    button("last", "\u00bb|", "last step (End)", function () { self.go(self.steps.length - 1); });

    c.appendChild(el("label", null, "hand"));
    var hs = this.handSelect = el("select", "hand-select");
    d.hands.forEach(function (h) {
      var o = el("option", null, String(h.n));
      o.value = String(h.step);
      hs.appendChild(o);
    });
    hs.addEventListener("change", function () { self.go(parseInt(hs.value, 10)); });
    c.appendChild(hs);

    c.appendChild(el("label", null, "seat"));
    var ss = this.seatSelect = el("select", "seat-select");
    var all = el("option", null, "all (every hand)");
    all.value = "all";
    ss.appendChild(all);
    d.seats.forEach(function (s, k) {
      var o = el("option", null, self.seatLabel(k));
      o.value = s;
      ss.appendChild(o);
    });
    ss.addEventListener("change", function () { self.setSeat(ss.value); });
    c.appendChild(ss);
    this.position = el("span", "position");
    c.appendChild(this.position);
    root.appendChild(c);

    var layout = el("div", "layout");
    var table = this.tableEl = el("div", "table" + (this.n === 2 ? " two" : ""));
    var areas = this.n === 4 ? { N: "top", E: "right", S: "bottom", W: "left" } : { B: "top", A: "bottom" };
    this.seatEls = [];
    d.seats.forEach(function (s, k) {
      var box = el("div", "seat");
      box.style.gridArea = areas[s];
      box.setAttribute("data-seat", s);
      var who = el("div", "who");
      who.appendChild(el("span", "seat-name", s + " "));
      var info = d.names[k] || {};
      who.appendChild(el("span", "bot-name", info.name || ""));
      who.appendChild(el("span", "version", info.version || ""));
      box.appendChild(who);
      box.appendChild(el("div", "line"));
      box.appendChild(el("div", "hand"));
      table.appendChild(box);
      self.seatEls.push(box);
    });
    var center = this.centerEl = el("div", "center");
    table.appendChild(center);
    layout.appendChild(table);

    var side = this.sideEl = el("div", "side");
    layout.appendChild(side);
    root.appendChild(layout);

    document.addEventListener("keydown", function (ev) { self.key(ev); });
  };

  Viewer.prototype.key = function (ev) {
    if (ev.target && /^(SELECT|INPUT|TEXTAREA)$/.test(ev.target.tagName)) return;
    var k = ev.key, done = true;
    if (k === "ArrowRight") this.go(this.index + 1);
    else if (k === "ArrowLeft") this.go(this.index - 1);
    else if (k === "ArrowDown") this.nextTrick();
    else if (k === "ArrowUp") this.prevTrick();
    else if (k === "PageDown") this.nextHand();
    else if (k === "PageUp") this.prevHand();
    else if (k === "Home") this.go(0);
    else if (k === "End") this.go(this.steps.length - 1);
    else if (k === " ") this.toggle();
    else done = false;
    if (done) ev.preventDefault();
  };

  /* Step indices where something starts: each trick's first card and each deal. */
  Viewer.prototype.marksOf = function (what) {
    var out = [];
    this.data.hands.forEach(function (h) {
      out.push(h.step);
      if (what === "trick") h.tricks.forEach(function (t) { out.push(t); });
    });
    out.push(this.steps.length - 1);
    return out.sort(function (a, b) { return a - b; });
  };
  Viewer.prototype.nextOf = function (what) {
    var i = this.index, m = this.marksOf(what);
    for (var k = 0; k < m.length; k++) if (m[k] > i) return m[k];
    return this.steps.length - 1;
  };
  Viewer.prototype.prevOf = function (what) {
    var i = this.index, m = this.marksOf(what);
    for (var k = m.length - 1; k >= 0; k--) if (m[k] < i) return m[k];
    return 0;
  };
  Viewer.prototype.nextTrick = function () { this.go(this.nextOf("trick")); };
  Viewer.prototype.prevTrick = function () { this.go(this.prevOf("trick")); };
  Viewer.prototype.nextHand = function () { this.go(this.nextOf("hand")); };
  Viewer.prototype.prevHand = function () { this.go(this.prevOf("hand")); };

  Viewer.prototype.toggle = function () {
    var self = this;
    if (this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    } else {
      if (this.index >= this.steps.length - 1) this.go(0);
      this.timer = setInterval(function () {
        if (self.index >= self.steps.length - 1) { self.toggle(); return; }
        self.go(self.index + 1);
      }, this.options.delay || 700);
    }
    this.playButton.textContent = this.timer ? "\u23f8 pause" : "\u25b6 play";
    this.root.setAttribute("data-playing", this.timer ? "true" : "false");
  };

  Viewer.prototype.setSeat = function (seat) {
    this.seat = seat;
    this.seatSelect.value = seat;
    this.render();
  };

  Viewer.prototype.go = function (i) {
    this.index = Math.max(0, Math.min(this.steps.length - 1, i));
    this.render();
  };

  Viewer.prototype.sees = function (k) { return this.seat === "all" || this.seat === this.data.seats[k]; };

  /* What an action says in the current view: the acting seat's private part only for it. */
  Viewer.prototype.actionEl = function (a, cls) {
    var d = this.data, line = el("div", cls);
    line.appendChild(el("span", "actor", d.seats[a.s] + " "));
    var what = a.x;
    if (a.k === "play") what = "plays";
    else if (a.k === "bid") what = a.v === 0 ? "bids nil" : "bids " + a.v;
    line.appendChild(el("span", "what", what));
    if (a.c) line.appendChild(cardsEl("cards", a.c));
    if (this.sees(a.s) && a.px) {
      line.appendChild(el("span", "private", ": " + a.px + " "));
      if (a.pc) line.appendChild(cardsEl("cards private", a.pc));
      if (a.pdx) line.appendChild(el("span", "private", " " + a.pdx + " "));
      if (a.pd) line.appendChild(cardsEl("cards private", a.pd));
    }
    var t = [];
    if (a.ms !== undefined) t.push(a.ms + " ms");
    if (a.cpu !== undefined) t.push("cpu " + a.cpu + " ms");
    if (t.length) line.appendChild(el("span", "time", "(" + t.join(", ") + ")"));
    if (a.note) line.appendChild(el("span", "note", " note: " + a.note));
    if (a.def) {
      var b = el("span", "badge " + (a.def === "timeout" ? "timeout" : "strike"), "default: " + a.def);
      if (a.why) b.title = a.why;
      line.appendChild(b);
      // The seat's decision index: what `python -m arena_sdk.testing ... --decision K` takes.
      if (typeof a.dn === "number") line.appendChild(el("span", "struck", " decision " + a.dn + (a.why ? ": " + a.why : "")));
    }
    return line;
  };

  Viewer.prototype.render = function () {
    var self = this, d = this.data, st = this.steps[this.index], n = this.n;
    this.root.setAttribute("data-step", String(this.index));
    this.root.setAttribute("data-seat-view", this.seat);
    this.position.textContent = "hand " + st.n + " \u00b7 step " + (this.index + 1) + " / " + this.steps.length;
    var hv = -1;
    d.hands.forEach(function (h, k) { if (h.step <= self.index) hv = k; });
    if (hv >= 0) this.handSelect.value = String(d.hands[hv].step);

    // Seats: name line, bid, tricks, marks, and the hand as the chosen view sees it.
    d.seats.forEach(function (s, k) {
      var box = self.seatEls[k];
      box.classList.toggle("to-move", st.m === k);
      box.classList.toggle("viewing", self.seat === s);
      var line = box.querySelector(".line");
      line.textContent = "";
      var bid = st.b[k];
      var bidText = bid === null || bid === undefined ? "bid \u2013" : "bid " + bid;
      line.appendChild(el("span", "bid", bidText));
      if (st.bl[k]) line.appendChild(el("span", "badge blind", "blind nil"));
      else if (bid === 0) line.appendChild(el("span", "badge nil", "nil"));
      line.appendChild(el("span", "tricks", " \u00b7 tricks " + st.w[k]));
      if (n === 2 && st.x && st.x[k]) line.appendChild(el("span", "exchanged", " \u00b7 exchanged " + st.x[k]));
      if (d.strikes && d.strikes[k]) line.appendChild(el("span", "strikes", " \u00b7 strikes in game " + d.strikes[k]));
      (st.e || []).forEach(function (m) {
        if (m[1] === k) line.appendChild(el("span", "badge " + m[0], m[0] === "voidsuit" ? m[2] : m[0]));
      });
      if (st.m === k && st.k) line.appendChild(el("span", "badge", "to " + st.k.replace("_", " ")));
      var hand = box.querySelector(".hand");
      hand.textContent = "";
      var truth = maskCards(st["h" + k]);
      var shown = null;
      if (self.seat === "all") shown = truth;
      else if (self.seat === s) {
        var own = st["v" + k];
        shown = own === null || own === undefined ? null : own === "=" ? truth : maskCards(own);
        if (shown === null && truth.length) hand.appendChild(el("span", "note", "not looked at yet "));
      }
      hand.setAttribute("data-shown", shown === null ? "hidden" : "face");
      if (shown === null) truth.forEach(function () { hand.appendChild(backEl()); });
      else shown.forEach(function (c) { hand.appendChild(cardEl(c)); });
    });

    // Centre: the trick (leader, winner), the two-player draw, status.
    var center = this.centerEl;
    center.textContent = "";
    var trick = el("div", "trick");
    st.t.forEach(function (p) {
      var cls = "played" + (p[0] === st.tl ? " leader" : "") + (p[0] === st.tw ? " winner" : "");
      var box = el("div", cls);
      box.setAttribute("data-seat", d.seats[p[0]]);
      box.appendChild(cardEl(p[1]));
      box.appendChild(el("span", "who", d.seats[p[0]]));
      trick.appendChild(box);
    });
    center.appendChild(trick);
    var status = [];
    if (st.tw !== null && st.tw !== undefined) status.push(d.seats[st.tw] + " wins the trick");
    else if (st.tl !== null && st.tl !== undefined) status.push(d.seats[st.tl] + " leads");
    status.push(st.sb ? "spades broken" : "spades not broken");
    var stEl = el("div", "status", status.join(" \u00b7 "));
    stEl.setAttribute("data-spades-broken", st.sb ? "true" : "false");
    center.appendChild(stEl);
    if (n === 2) {
      if (st.of) {
        var pile = el("div", "pile offered");
        pile.appendChild(el("span", "label", d.seats[st.of[0]] + " is offered"));
        pile.appendChild(this.sees(st.of[0]) ? cardEl(st.of[1]) : backEl());
        center.appendChild(pile);
      }
      var seen = null, label = "";
      if (this.seat === "all") { seen = maskCards(st.dc); label = "discard pile"; }
      else { seen = maskCards(st["s" + d.seats.indexOf(this.seat)]); label = "discards " + this.seat + " saw"; }
      if (seen.length) {
        var dp = el("div", "pile discards");
        dp.appendChild(el("span", "label", label));
        seen.forEach(function (c) { dp.appendChild(cardEl(c, "inline")); });
        center.appendChild(dp);
      }
    }
    this.renderSide(st);
  };

  Viewer.prototype.renderSide = function (st) {
    var self = this, d = this.data, side = this.sideEl;
    side.textContent = "";
    side.appendChild(el("h3", null, "Score"));
    var t = el("table", "scores");
    var hr = el("tr");
    ["", "score", "bags", "bid", "tricks"].forEach(function (h) { hr.appendChild(el("th", null, h)); });
    t.appendChild(hr);
    d.teams.forEach(function (team, ti) {
      var members = d.players === 4 ? [ti, ti + 2] : [ti];
      var bid = 0, tricks = 0;
      members.forEach(function (s) { bid += st.b[s] || 0; tricks += st.w[s]; });
      var tr = el("tr");
      tr.setAttribute("data-team", team);
      tr.appendChild(el("td", "team", team));
      tr.appendChild(el("td", "score", st.sc[ti]));
      tr.appendChild(el("td", "bags", st.bg[ti]));
      tr.appendChild(el("td", "bid", bid));
      tr.appendChild(el("td", "tricks", tricks));
      t.appendChild(tr);
    });
    side.appendChild(t);

    side.appendChild(el("h3", null, "Last decision"));
    var act = el("div", "action");
    if (st.a) act.appendChild(this.actionEl(st.a, "entry"));
    else if (!st.end) act.appendChild(el("div", null, "Hand " + st.n + ": " + d.seats[st.d] + (d.players === 4 ? " deals" : " plays first")));
    side.appendChild(act);

    if (st.e && st.e.length) {
      var marks = el("div", "marks");
      st.e.forEach(function (m) {
        var line = el("div", "mark");
        line.setAttribute("data-mark", m[0]);
        line.appendChild(el("span", "badge " + m[0], m[0]));
        line.appendChild(el("span", null, " " + (m[1] === null ? "" : d.seats[m[1]] + ": ") + m[2]));
        marks.appendChild(line);
      });
      side.appendChild(marks);
    }

    if (st.hr) {
      side.appendChild(el("h3", null, "Hand " + st.n + " scored"));
      var b = el("table", "breakdown");
      var head = el("tr");
      head.appendChild(el("th", null, ""));
      d.teams.forEach(function (team) { head.appendChild(el("th", null, team)); });
      b.appendChild(head);
      var rows = [
        ["contract", function (r) { return r.contract + (r.made ? " made" : " set"); }],
        ["contract points", function (r) { return r.contract_points; }],
        ["nil", function (r) {
          return r.nil_results.map(function (x) { return x.seat + " " + x.kind.replace("_", " ") + (x.made ? " made " : " failed ") + x.points; }).join(", ") || "\u2013";
        }],
        ["bags", function (r) { return r.bags + " (" + r.bag_points + ")"; }],
        ["penalties", function (r) { return r.penalties + " (" + r.penalty_points + ")"; }],
        ["hand points", function (r) { return r.points; }],
        ["score", function (r) { return r.score_before + " \u2192 " + r.score_after; }],
        ["bag count", function (r) { return r.bags_before + " \u2192 " + r.bags_after; }],
      ];
      rows.forEach(function (row) {
        var tr = el("tr");
        tr.setAttribute("data-row", row[0]);
        tr.appendChild(el("td", null, row[0]));
        st.hr.forEach(function (r) { tr.appendChild(el("td", null, row[1](r))); });
        b.appendChild(tr);
      });
      side.appendChild(b);
    }
    if (st.end) {
      var e = st.end, w = e.winner === null ? "no winner" : e.winner + " wins";
      side.appendChild(el("p", "end", "Game over (" + e.ending + "): " + w + ", " + d.teams[0] + " " + e.scores[0] + " \u2013 " + d.teams[1] + " " + e.scores[1] + " after " + e.hands + " hands"));
    }

    side.appendChild(el("h3", null, "This hand"));
    var log = el("div", "log");
    var start = 0;
    d.hands.forEach(function (h) { if (h.step <= self.index) start = h.step; });
    for (var i = start + 1; i <= this.index; i++) {
      var a = this.steps[i].a;
      if (!a) continue;
      var entry = this.actionEl(a, "entry" + (i === this.index ? " current" : ""));
      log.appendChild(entry);
    }
    side.appendChild(log);
    if (!this.auditing) log.scrollTop = log.scrollHeight;  // reading the height forces a layout
  };

  /* Every step in every view: the face-up cards each part of the page shows (for tests). */
  Viewer.prototype.audit = function () {
    var out = [], views = ["all"].concat(this.data.seats);
    this.auditing = true;
    for (var i = 0; i < this.steps.length; i++) {
      var row = {};
      for (var v = 0; v < views.length; v++) {
        this.seat = views[v];
        this.go(i);
        var hands = {};
        var root = this.root;
        this.seatEls.forEach(function (box) {
          hands[box.getAttribute("data-seat")] = Array.prototype.map.call(
            box.querySelectorAll(".hand .card.face"), function (c) { return c.getAttribute("data-card"); });
        });
        var faces = Array.prototype.map.call(root.querySelectorAll(".card.face"), function (c) { return c.getAttribute("data-card"); });
        var trick = Array.prototype.map.call(root.querySelectorAll(".trick .card.face"), function (c) { return c.getAttribute("data-card"); });
        var scores = Array.prototype.map.call(root.querySelectorAll("table.scores td.score"), function (c) { return c.textContent; });
        var bags = Array.prototype.map.call(root.querySelectorAll("table.scores td.bags"), function (c) { return c.textContent; });
        var lines = {};
        this.seatEls.forEach(function (box) {
          var line = box.querySelector(".line");
          lines[box.getAttribute("data-seat")] = {
            bid: line.querySelector(".bid").textContent,
            tricks: line.querySelector(".tricks").textContent,
            badges: Array.prototype.map.call(line.querySelectorAll(".badge"), function (b) { return b.textContent; })
          };
        });
        var broken = root.querySelector(".status").getAttribute("data-spades-broken");
        row[views[v]] = { hands: hands, faces: faces, trick: trick, scores: scores, bags: bags, seats: lines, broken: broken };
      }
      out.push(row);
    }
    this.seat = "all";
    this.auditing = false;
    return out;
  };

  /* Press controls: "next,prev-trick,..." (buttons by data-control) or "key:ArrowRight". */
  function press(viewer, seq) {
    seq.split(",").forEach(function (what) {
      if (!what) return;
      if (what.indexOf("key:") === 0) {
        document.dispatchEvent(new KeyboardEvent("keydown", { key: what.slice(4), bubbles: true }));
      } else {
        var b = viewer.root.querySelector('[data-control="' + what + '"]');
        if (b) b.click();
      }
    });
  }

  /* Options in the address's #fragment: step=K (as shown, from 1), hand=H, seat=S, do=a,b,c (controls to press);
   * for tests: runs=seq|seq (where each sequence ends) and audit (every step, every view). */
  function fromHash(viewer) {
    var params = {};
    (location.hash || "").replace(/^#/, "").split("&").forEach(function (kv) {
      if (!kv) return;
      var p = kv.split("=");
      params[decodeURIComponent(p[0])] = decodeURIComponent(p.slice(1).join("="));
    });
    if (params.seat) viewer.setSeat(params.seat);
    // step=N: the step the page shows as "step N" (counted from 1, like the position line).
    if (params.step) viewer.go(parseInt(params.step, 10) - 1);
    if (params.hand) {
      var h = viewer.data.hands.filter(function (x) { return String(x.n) === params.hand; })[0];
      if (h) viewer.go(h.step);
    }
    if (params["do"]) press(viewer, params["do"]);
    if (params.runs !== undefined) {
      // Several control sequences, each from the first step: where each one ends.
      var ends = params.runs.split("|").map(function (seq) {
        viewer.setSeat("all");
        viewer.go(0);
        press(viewer, seq);
        return viewer.index;
      });
      var runs = el("pre", null, JSON.stringify(ends));
      runs.id = "runs";
      runs.hidden = true;
      document.body.appendChild(runs);
    }
    if (params.audit !== undefined) {
      var pre = el("pre", null, JSON.stringify(viewer.audit()));
      pre.id = "audit";
      pre.hidden = true;
      document.body.appendChild(pre);
      viewer.go(0);
    }
  }

  function start() {
    if (document.getElementById("pair-frames")) { pairPage(); return; }
    var nodes = document.querySelectorAll("script.game-data");
    var viewers = [];
    Array.prototype.forEach.call(nodes, function (node) {
      var root = document.getElementById(node.getAttribute("data-viewer"));
      var v = new Viewer(root, JSON.parse(node.textContent), {});
      v.go(0);
      viewers.push(v);
    });
    if (viewers.length === 1) {
      fromHash(viewers[0]);
      if (window.parent !== window) embedded(viewers[0]);
    }
    window.arenaViewers = viewers;
  }

  /* In a pair page's frame: take the pair's button presses, report where we are. */
  function embedded(viewer) {
    document.body.classList.add("embedded");
    function report() {
      var st = viewer.steps[viewer.index];
      window.parent.postMessage({ arenaViewer: { step: viewer.index, hand: st.n, steps: viewer.steps.length } }, "*");
    }
    var render = viewer.render;
    viewer.render = function () { render.call(viewer); report(); };
    window.addEventListener("message", function (ev) {
      if (ev.data && typeof ev.data.arenaPress === "string") press(viewer, ev.data.arenaPress);
    });
    report();
  }

  /* A duplicate pair: both tables (frames) move together by hand and trick. */
  function pairPage() {
    var frames = Array.prototype.slice.call(document.querySelectorAll("iframe.table-frame"));
    var bar = document.getElementById("pair-controls");
    var status = document.getElementById("pair-status");
    var where = {};
    function send(what) {
      frames.forEach(function (f) { f.contentWindow.postMessage({ arenaPress: what }, "*"); });
    }
    [["first", "|\u00ab both"], ["prev-hand", "\u00ab both: hand"], ["prev-trick", "\u2039 both: trick"],
     ["next-trick", "both: trick \u203a"], ["next-hand", "both: hand \u00bb"]].forEach(function (spec) {
      var b = el("button", null, spec[1]);
      b.type = "button";
      b.setAttribute("data-control", "both-" + spec[0]);
      b.addEventListener("click", function () { send(spec[0]); });
      bar.appendChild(b);
    });
    window.addEventListener("message", function (ev) {
      var info = ev.data && ev.data.arenaViewer;
      if (!info) return;
      frames.forEach(function (f) { if (f.contentWindow === ev.source) where[f.getAttribute("data-side")] = info; });
      status.textContent = ["left", "right"].map(function (side) {
        var w = where[side];
        return side + ": " + (w ? "hand " + w.hand + ", step " + (w.step + 1) + " / " + w.steps : "loading");
      }).join(" \u00b7 ");
      ["left", "right"].forEach(function (side) {
        if (where[side]) status.setAttribute("data-" + side + "-step", String(where[side].step));
      });
    });
    // For links and tests: #do=next-hand,next-trick presses both tables once loaded.
    var m = /(?:^#|&)do=([^&]*)/.exec(location.hash || "");
    if (m) {
      var pending = frames.length;
      frames.forEach(function (f) {
        f.addEventListener("load", function () { if (--pending === 0) decodeURIComponent(m[1]).split(",").forEach(send); });
      });
    }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
