"use strict";
/**
 * The Colyseus side of the comparison: a Colyseus server with one room type, `holdem`, a no-limit
 * Hold'em table of 6 seats played by clients and watched by spectators (holdem.js has the rules).
 *
 *   node server.js --port 2567
 *
 * A client joins with {seat: 1..6} to play that seat or {spectator: true} to watch; the match starts
 * when the sixth seat is taken. Messages: "act" {type, amount?, turn} (every action is checked: the
 * sender holds the seat to act, the turn is the current one, the action and amount are legal) and
 * "rematch" {} once the match is finished. A refused message gets "error" {code, message}.
 *
 * Each seat's client has a StateView holding its own Player: the `hole` field (view-tagged) reaches
 * that client only. The automatic patch interval is off: the room sends the patch of each step
 * (broadcastPatch) as soon as it has applied it, as cardhall sends a step's events.
 */
const http = require("node:http");
const { Server, Room } = require("@colyseus/core");
const { WebSocketTransport } = require("@colyseus/ws-transport");
const { StateView } = require("@colyseus/schema");
const { Player, TableState, HoldemTable, Refused } = require("./holdem");

const SEATS = 6;

class HoldemRoom extends Room {
  onCreate() {
    this.maxClients = SEATS + 8;
    this.patchRate = null;  // no interval: a patch right after each step
    this.state = new TableState();
    for (let s = 1; s <= SEATS; s++) {
      this.state.players.set(String(s), new Player({ seat: s, name: "", stack: 0 }));
    }
    this.table = new HoldemTable(this.state, SEATS);
    this.seatOf = new Map();  // sessionId -> seat
    this.onMessage("act", (client, message) => this.step(client, () => {
      const seat = this.seatOf.get(client.sessionId);
      if (!seat) throw new Refused("not_a_player", "spectators cannot act");
      if (!message || typeof message.type !== "string") throw new Refused("bad_request", "act needs a type");
      this.table.act(seat, message);
    }));
    this.onMessage("rematch", (client) => this.step(client, () => {
      if (!this.seatOf.has(client.sessionId)) throw new Refused("not_a_player", "spectators cannot ask");
      this.table.rematch();
    }));
  }

  /** Run `change` for `client`'s message, then send the patch; a refusal goes back to the client alone. */
  step(client, change) {
    try {
      change();
    } catch (err) {
      if (!(err instanceof Refused)) throw err;
      client.send("error", { code: err.code, message: err.message });
      return;
    }
    this.broadcastPatch();
  }

  onJoin(client, options) {
    client.view = new StateView();
    if (options && options.spectator) {
      this.state.spectators += 1;
      this.broadcastPatch();
      return;
    }
    const seat = Number(options && options.seat);
    const player = this.state.players.get(String(seat));
    if (!player || player.name) throw new Error(`seat ${seat} is not free`);
    player.name = String(options.name || `seat ${seat}`).slice(0, 40);
    this.seatOf.set(client.sessionId, seat);
    client.view.add(player);
    if (this.seatOf.size === SEATS && this.state.status === "waiting") this.table.startMatch();
    this.broadcastPatch();
  }

  onLeave(client) {
    const seat = this.seatOf.get(client.sessionId);
    if (seat === undefined) this.state.spectators = Math.max(0, this.state.spectators - 1);
    this.seatOf.delete(client.sessionId);
  }
}

/** Start the server on `port` (127.0.0.1); resolves to the Colyseus Server once it listens. */
async function serve(port) {
  const server = http.createServer();
  const gameServer = new Server({ transport: new WebSocketTransport({ server }), greet: false });
  gameServer.define("holdem", HoldemRoom);
  await gameServer.listen(port, "127.0.0.1");
  return gameServer;
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const at = args.indexOf("--port");
  const port = at >= 0 ? Number(args[at + 1]) : 2567;
  serve(port).then(() => console.log(`colyseus holdem listening on 127.0.0.1:${port}`));
  process.on("SIGTERM", () => process.exit(0));
}

module.exports = { HoldemRoom, serve };
