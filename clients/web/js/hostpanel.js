// The host's side of a table (SPEC "Private tables", "The host's controls", protocol 1.5): the
// events of seat requests, kicks, bans and ownership kept in the model, their log lines, and the
// owner's panel: the invite link, the requests for a seat (Approve / Deny), per seated person Kick,
// Ban and Make host, and Close table.
//
// The requests are known from the `seat_requested` events this page saw (no snapshot lists them):
// an owner who reloads sees the requests made after it joined again.

import { h } from "./dom.js";

/** The table events of 1.5's private tables and host controls (none of them ends a turn). */
export const HOST_EVENTS = ["seat_requested", "seat_approved", "seat_denied", "seat_request_lapsed",
  "kicked", "banned", "owner_changed"];

/** `<page>#table=<id>&invite=<secret>` (SPEC "Private tables": the part after # never reaches a server). */
export function inviteLink(table, invite) {
  return `${location.origin}${location.pathname}#table=${encodeURIComponent(table)}&invite=${encodeURIComponent(invite)}`;
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
    h("div", { class: "invite-row" }, input, h("button", { type: "button", class: "ctl", "data-control": "copy-invite", onclick: copy }, "Copy"), status));
}

/**
 * Apply host event `e` to model `m` (`m.requests`: player id -> name of the waiting requests;
 * `m.info.owner`). `me`: this page's player id. Returns what happened to this page's player:
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
      return mine ? "banned" : null;
    case "owner_changed":
      m.info.owner = e.owner;
      return null;
    default:
      return null;
  }
}

/** The log line of host event `e`; `who(player)`: a name for a player id. */
export function describeHost(e, who) {
  switch (e.type) {
    case "seat_requested": return `${e.name} asks for a seat`;
    case "seat_approved": return `${who(e.player)} may sit (seat ${e.seat})`;
    case "seat_denied": return `The host turned down ${who(e.player)}'s request for a seat`;
    case "seat_request_lapsed": return `${who(e.player)}'s request for a seat lapsed (${e.reason})`;
    case "kicked": return `The host removed ${who(e.player)}${e.seat != null ? ` from seat ${e.seat}` : ""}: now watching`;
    case "banned": return `The host banned ${who(e.player)} from the table`;
    case "owner_changed": return `${who(e.owner)} is the host now${e.reason === "absent" ? " (the host was away)" : ""}`;
    default: return null;
  }
}

/**
 * The owner's panel of `table` (a Table: `model`, `conn.player`, `id`, `act(action)`), or null when
 * this page's player does not own it or the table is closed.
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
  return h("section", { class: "host-panel", "aria-label": "Host controls" },
    h("h2", {}, "You host this table"),
    info.invite ? inviteBox(table.id, info.invite) : null,
    h("h3", {}, "Requests for a seat"),
    requests.length ? h("ul", { class: "requests" }, requests) : h("p", { class: "muted" }, "None waiting."),
    h("h3", {}, "Players"),
    people.length ? h("ul", { class: "people" }, people) : h("p", { class: "muted" }, "Nobody else is seated."),
    h("button", { type: "button", class: "ctl danger", "data-control": "close",
      onclick: () => confirm("Close this table for everyone?") && act({ type: "close" }) }, "Close table"));
}
