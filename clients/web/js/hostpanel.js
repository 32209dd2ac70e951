// The host's side of a table (SPEC "Private tables", "The host's controls", protocol 1.5): the
// events of seat requests, kicks, bans and ownership kept in the model, their log lines, and the
// owner's panel: the invite link, the requests for a seat (Approve / Deny), per seated person Kick,
// Ban and Make host, per spectator known from the chat Ban, and Close table.
//
// The requests waiting are in the owner's snapshot (`info.requests`, oldest first: a reload or a new
// host knows them), then kept up to date by the `seat_requested` ... `seat_request_lapsed` events.
// The invite is in the owner's snapshot too (`info.invite`), also the one a new host is sent on its
// own right after `owner_changed`. Spectators are known only from their chat messages (`chat.from`,
// seat null): no event or snapshot lists who watches.

import { h } from "./dom.js";

/** The table events of 1.5's private tables and host controls (none of them ends a turn). */
export const HOST_EVENTS = ["seat_requested", "seat_approved", "seat_denied", "seat_request_lapsed",
  "kicked", "banned", "owner_changed"];

/** `<page>#table=<id>&invite=<secret>` (SPEC "Private tables": the part after # never reaches a server). */
export function inviteLink(table, invite) {
  return `${location.origin}${location.pathname}#table=${encodeURIComponent(table)}&invite=${encodeURIComponent(invite)}`;
}

/**
 * Take the requests for a seat of `info` (the owner's snapshot: `info.requests`, a list of
 * `{player, name, seat}`, oldest first) into model `m` (`m.requests`: player id -> name); nothing
 * when `info` has none (another viewer's snapshot: the events keep `m.requests`).
 */
export function requestsFrom(m, info) {
  if (!Array.isArray(info.requests)) return;
  m.requests = {};
  m.known = m.known || {};
  for (const r of info.requests) {
    m.requests[r.player] = r.name;
    m.known[r.player] = r.name;
  }
}

/**
 * The spectators of model `m` known from their chat messages (`chat` events with seat null), as
 * `[player id, last name]`: not seated now, not banned, not `me`; in the order they last spoke.
 */
export function chattingSpectators(m, me) {
  const seated = new Set(m.info.occupants.map((o) => o.player).filter(Boolean));
  const banned = m.banned || {};
  const seen = new Map();
  for (const l of m.chat || []) {
    if (l.seat != null || l.from === me || seated.has(l.from) || banned[l.from]) continue;
    seen.delete(l.from);
    seen.set(l.from, l.name);
  }
  return [...seen.entries()];
}

/** A read-only field with the invite link and a Copy button. */
export function inviteBox(table, invite) {
  const link = inviteLink(table, invite);
  const input = h("input", { type: "text", readonly: true, value: link, class: "invite-link", "aria-label": "Invite link" });
  const status = h("span", { class: "copy-status", role: "status" });
  const copy = async () => {
    input.select();
    try {
      await navigator.clipboard.writeText(link);
      status.textContent = "Copied";
    } catch {
      status.textContent = document.execCommand && document.execCommand("copy") ? "Copied" : "Select the link and copy it";
    }
  };
  return h("div", { class: "invite" },
    h("p", { class: "hint" }, "Whoever has this link can open the table (unlisted tables only with it):"),
    h("div", { class: "invite-row" }, input, h("button", { type: "button", class: "ctl", "data-control": "copy-invite", "data-local": true, onclick: copy }, "Copy"), status));
}

/**
 * Apply host event `e` to model `m` (`m.requests`: player id -> name of the waiting requests;
 * `m.banned`: player ids banned; `m.info.owner`). `me`: this page's player id. Returns what happened to this page's player:
 * "requested" (its request waits: a join with `since` is answered by the events, no snapshot), "approved", "denied", "lapsed", "kicked", "banned" or null.
 */
export function hostEvent(m, e, me) {
  m.requests = m.requests || {};
  m.known = m.known || {}; // names of requesters, for the log once their request ends
  const mine = e.player != null && e.player === me;
  switch (e.type) {
    case "seat_requested":
      m.requests[e.player] = e.name;
      m.known[e.player] = e.name;
      return mine ? "requested" : null;
    case "seat_approved":
      delete m.requests[e.player];
      return mine ? "approved" : null;
    case "seat_denied":
      delete m.requests[e.player];
      return mine ? "denied" : null;
    case "seat_request_lapsed":
      delete m.requests[e.player];
      return mine ? "lapsed" : null;
    case "kicked":
      delete m.requests[e.player];
      return mine ? "kicked" : null;
    case "banned":
      delete m.requests[e.player];
      m.banned = m.banned || {};
      m.banned[e.player] = true;
      return mine ? "banned" : null;
    case "owner_changed":
      m.info.owner = e.owner;
      return null;
    default:
      return null;
  }
}

/** The log line of host event `e`; `who(player)`: a name for a player id ("you" for this page's). */
export function describeHost(e, who) {
  const whose = (player) => (who(player) === "you" ? "your" : `${who(player)}'s`);
  switch (e.type) {
    case "seat_requested": return `${e.name} asks for a seat`;
    case "seat_approved": return `${who(e.player)} may sit (seat ${e.seat})`;
    case "seat_denied": return `The host turned down ${whose(e.player)} request for a seat`;
    case "seat_request_lapsed": return `${whose(e.player).replace(/^your$/, "Your")} request for a seat lapsed (${e.reason})`;
    case "kicked": return `The host removed ${who(e.player)}${e.seat != null ? ` from seat ${e.seat}` : ""}: now watching`;
    case "banned": return `The host banned ${who(e.player)} from the table`;
    case "owner_changed": return `${who(e.owner)} is the host now${e.reason === "absent" ? " (the host was away)" : ""}`;
    default: return null;
  }
}

/**
 * The owner's panel of `table` (a Table: `model`, `conn.player`, `id`, `invite`, `act(action)`), or
 * null when this page's player does not own it or the table is closed. The invite is the owner's
 * snapshot's, else the one this page came with (a link).
 */
export function hostPanel(table) {
  const m = table.model;
  const info = m.info;
  const me = table.conn.player;
  if (!me || info.owner !== me || info.status === "closed") return null;
  const act = (action) => table.act(action);
  const requests = Object.entries(m.requests || {}).map(([player, name]) =>
    h("li", { "data-request": player }, h("span", {}, name),
      h("button", { type: "button", class: "ctl primary", "data-control": "approve", onclick: () => act({ type: "approve", player }) }, "Approve"),
      h("button", { type: "button", class: "ctl", "data-control": "deny", onclick: () => act({ type: "deny", player }) }, "Deny")));
  const people = info.occupants.filter((o) => o.player && !o.bot && o.player !== me).map((o) =>
    h("li", { "data-person": o.player, "data-seat": o.seat }, h("span", {}, `${o.name} (seat ${o.seat})`),
      h("button", { type: "button", class: "ctl", "data-control": "kick", title: "Take the seat: the player may watch", onclick: () => act({ type: "kick", player: o.player }) }, "Kick"),
      h("button", { type: "button", class: "ctl", "data-control": "ban", title: "Remove the player from the table for good",
        onclick: () => confirm(`Ban ${o.name} from this table?`) && act({ type: "ban", player: o.player }) }, "Ban"),
      h("button", { type: "button", class: "ctl", "data-control": "transfer", title: "Hand this table over: you become a player like any other",
        onclick: () => confirm(`Make ${o.name} the host of this table?`) && act({ type: "transfer", player: o.player }) }, "Make host")));
  const watchers = chattingSpectators(m, me).map(([player, name]) =>
    h("li", { "data-spectator": player }, h("span", {}, `${name} (watching)`),
      h("button", { type: "button", class: "ctl", "data-control": "ban", title: "Remove the spectator from the table for good",
        onclick: () => confirm(`Ban ${name} from this table?`) && act({ type: "ban", player }) }, "Ban")));
  const invite = info.invite || table.invite;
  return h("section", { class: "host-panel", "aria-label": "Host controls" },
    h("h2", {}, "You host this table"),
    invite ? inviteBox(table.id, invite) : null,
    h("h3", {}, "Requests for a seat"),
    requests.length ? h("ul", { class: "requests" }, requests) : h("p", { class: "muted" }, "None waiting."),
    h("h3", {}, "Players"),
    people.length ? h("ul", { class: "people" }, people) : h("p", { class: "muted" }, "Nobody else is seated."),
    watchers.length ? h("h3", {}, "Spectators who chatted") : null,
    watchers.length ? h("ul", { class: "spectators" }, watchers) : null,
    h("button", { type: "button", class: "ctl danger", "data-control": "close",
      onclick: () => confirm("Close this table for everyone?") && act({ type: "close" }) }, "Close table"));
}
