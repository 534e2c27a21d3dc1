/* games.html: sort each pairing's games by the swing of their deal.
 * Click a "Swing" heading: the deals that cost the pairing's first entry the most come first,
 * click again: those that cost the second entry the most, again: the listed order.
 * The two games of a deal stay together.  #sort=swing (or #sort=-swing) in the address
 * sorts every table at load (the tests use it).  No rule of Spades here: the numbers are
 * computed in Python (arena/publish/games.py, deal_swing). */
(function () {
  "use strict";

  var NEXT = { "": "asc", asc: "desc", desc: "" };
  var ARIA = { "": "none", asc: "ascending", desc: "descending" };

  function swingOf(row) {
    var v = row.getAttribute("data-swing");
    return v === null || v === "" ? null : parseInt(v, 10);
  }

  function sortTable(table, how) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var first = {};  // each deal's place in the listed order: its games stay together
    rows.forEach(function (row, i) {
      if (!row.hasAttribute("data-order")) row.setAttribute("data-order", String(i));
    });
    function order(row) { return parseInt(row.getAttribute("data-order"), 10); }
    rows.forEach(function (row) {
      var deal = row.getAttribute("data-cluster"), k = order(row);
      if (!(deal in first) || k < first[deal]) first[deal] = k;
    });
    rows.sort(function (a, b) {
      if (how !== "") {
        var x = swingOf(a), y = swingOf(b);
        if (x === null && y !== null) return 1;   // deals without a swing last
        if (y === null && x !== null) return -1;
        if (x !== null && y !== null && x !== y) return how === "asc" ? x - y : y - x;
        var dx = first[a.getAttribute("data-cluster")], dy = first[b.getAttribute("data-cluster")];
        if (dx !== dy) return dx - dy;
      }
      return order(a) - order(b);
    });
    rows.forEach(function (row) { body.appendChild(row); });
    var th = table.querySelector("th.swing");
    if (th) {
      th.setAttribute("data-sorted", how);
      th.setAttribute("aria-sort", ARIA[how]);
    }
  }

  function start() {
    var tables = Array.prototype.slice.call(document.querySelectorAll("table.games"));
    tables.forEach(function (table) {
      var th = table.querySelector("th.swing");
      if (!th) return;
      th.classList.add("sortable");
      th.setAttribute("tabindex", "0");
      th.setAttribute("title", "sort by the deal's swing");
      function toggle() { sortTable(table, NEXT[th.getAttribute("data-sorted") || ""]); }
      th.addEventListener("click", toggle);
      th.addEventListener("keydown", function (ev) {
        if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); toggle(); }
      });
    });
    var m = /(?:^#|&)sort=(-?)swing(?:&|$)/.exec(location.hash || "");
    if (m) tables.forEach(function (table) { sortTable(table, m[1] ? "desc" : "asc"); });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
