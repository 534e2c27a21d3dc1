#!/usr/bin/env node
// A minimal Spades arena bot in Node.js: random legal decisions (blind nil one time in eight).
//
// Written from proto/arena/v1/arena.proto and docs/protocol.md alone, without
// the Python SDK, to show that the wire contract is enough. It plays every
// preset (four and two players, blind nil, the two-player draw and exchange).
//
//   cd example_bots/node && npm ci      # @grpc/grpc-js and @grpc/proto-loader, pinned
//   arena match run --bot cmd:"node example_bots/node/bot.js" --bot cmd:"python example_bots/random/bot.py"
//
// The arena sets ARENA_ADDRESS (unix:/path/to.sock or host:port) and
// ARENA_TOKEN (this seat's secret; local processes get ARENA_TOKEN_FILE, a pipe to read it from).
"use strict";

const path = require("path");
const fs = require("fs");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");

const NAME = "node-random";
const VERSION = "1";
const PROTOCOL_VERSION = 1;

// The contract: proto/arena/v1/arena.proto in a checkout, or ARENA_PROTO.
function protoFile() {
  const candidates = [
    process.env.ARENA_PROTO,
    path.join(__dirname, "arena.proto"),
    path.join(__dirname, "..", "..", "proto", "arena", "v1", "arena.proto"),
  ].filter(Boolean);
  const found = candidates.find((p) => fs.existsSync(p));
  if (!found) throw new Error(`cannot find arena.proto (looked in ${candidates.join(", ")})`);
  return found;
}

// keepCase: field names as in the .proto; longs as strings: request ids and
// seeds are uint64, which a JavaScript number cannot hold exactly beyond 2^53,
// so they are echoed back as the exact decimal text.
const definition = protoLoader.loadSync(protoFile(), {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
});
const arena = grpc.loadPackageDefinition(definition).arena.v1;

// A small seeded generator (mulberry32), reseeded per game from bot_seed so a
// replayed match is played the same way.
function generator(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let random = generator(1);
const pick = (items) => items[Math.floor(random() * items.length)];

// One action for a DecisionRequest. Every oneof member is set explicitly, even
// when it is a default value (bid 0, blind_nil false, keep false): proto-loader
// encodes a oneof member whenever it is present, so the referee sees it set.
function decide(request) {
  const legal = request.legal;
  switch (request.kind) {
    case "BLIND_NIL": // asked before the cards are shown (view.hand_hidden)
      return { blind_nil: random() < 0.125 };
    case "DRAW": // two players: keep or discard view.offered_card
      return { keep: random() < 0.5 };
    case "EXCHANGE": { // two players, after our blind nil: return 0-3 cards of our hand
      const hand = [...request.view.hand];
      const returned = [];
      for (let n = Math.floor(random() * 4); n > 0 && hand.length; n--) {
        returned.push(hand.splice(Math.floor(random() * hand.length), 1)[0]);
      }
      return { exchange: { cards: returned } };
    }
    case "BID": {
      const modest = legal.filter((b) => ["1", "2", "3", "4"].includes(b));
      return { bid: Number(pick(modest.length ? modest : legal)) };
    }
    case "PLAY":
      return { card: pick(legal) };
    default:
      throw new Error(`unknown decision kind ${request.kind}`);
  }
}

// Containers get the token in ARENA_TOKEN; local processes get it on an inherited
// pipe named by ARENA_TOKEN_FILE (read it once: other local bots cannot see it).
function seatToken() {
  if (process.env.ARENA_TOKEN) return process.env.ARENA_TOKEN;
  const path = process.env.ARENA_TOKEN_FILE;
  if (!path) return undefined;
  try {
    return require("fs").readFileSync(path, "utf8").trim() || undefined;
  } catch (err) {
    return undefined;
  }
}

function main() {
  const address = process.env.ARENA_ADDRESS;
  const token = seatToken();
  if (!address || !token) {
    console.error("ARENA_ADDRESS and ARENA_TOKEN (or ARENA_TOKEN_FILE) must be set (the arena sets them)");
    process.exit(2);
  }
  const client = new arena.Referee(address, grpc.credentials.createInsecure(), {
    "grpc.max_receive_message_length": 64 * 1024,
    "grpc.max_send_message_length": 64 * 1024,
  });
  const call = client.Play();
  let finished = false;

  call.on("data", (message) => {
    switch (message.message) {
      case "welcome": {
        const w = message.welcome;
        console.error(`joined ${w.match_id} as seat ${w.seat} of ${w.players}, ${w.games} games`);
        break;
      }
      case "game_start":
        random = generator(Number(BigInt(message.game_start.bot_seed) & 0xffffffffn));
        break;
      case "request": {
        const request = message.request;
        const started = process.hrtime.bigint();
        const action = decide(request);
        const thinkUs = String((process.hrtime.bigint() - started) / 1000n);
        call.write({ answer: { request_id: request.request_id, think_time_us: thinkUs, ...action } });
        break;
      }
      case "notice":
        console.error(`notice ${message.notice.level} ${message.notice.code}: ${message.notice.message}`);
        break;
      case "match_end":
        finished = true;
        call.end(); // close our side; the referee ends the stream with OK
        break;
      default: // hand_end, game_end: nothing to answer
        break;
    }
  });
  call.on("error", (err) => {
    // After match_end the referee may close first; anything else is a real error.
    if (!finished) {
      console.error(`stream error: ${err.code} ${err.details || err.message}`);
      process.exitCode = 1;
    }
  });
  call.on("end", () => client.close());
  call.write({
    join: { token, protocol_version: PROTOCOL_VERSION, bot_name: NAME, bot_version: VERSION },
  });
}

main();
