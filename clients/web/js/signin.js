// Signing in through the operator's site (protocol/SPEC.md "Identity"; deploy/README.md "Putting
// cardhall behind your accounts"). The operator's site sends a signed-in player to this page with a
// JWT in the URL's fragment, `https://cardhall.example/#auth=<JWT>`: a fragment never reaches a
// server's logs or a Referer header. The page takes it out of the address bar at once (nothing kept
// in history or in a bookmark) and keeps it in memory only, for its `hello` (conn.js); the resume
// token of the welcome is what the page keeps, as it keeps a guest's.
//
// A refusal of that hello (`bad_auth`: the JWT will not do; `auth_required`: the server admits only
// players its operator identifies, and this page has no JWT or only a guest's token) is shown as a
// page of its own (SignInNeeded): the connection stops, never a retry loop.

import { h, mount } from "./dom.js";

/** The fragment's key that carries the JWT. */
const AUTH_KEY = "auth";

/**
 * The JWT carried by the page's URL fragment (`#auth=<JWT>`, other `&`-separated `key=value` pairs
 * ignored), or null when the fragment carries none. A fragment that carries one is removed from the
 * address bar (history.replaceState: no history entry keeps it) and the page is then at its lobby.
 * A fragment that is a route of the page (`#/...`) is never read.
 */
export function takeAuthFragment() {
  const hash = location.hash.slice(1);
  if (!hash || hash.startsWith("/")) return null;
  const params = new URLSearchParams(hash);
  if (!params.has(AUTH_KEY)) return null;
  history.replaceState(history.state, "", location.pathname + location.search);
  return params.get(AUTH_KEY).trim() || null;
}

/** Whether the current fragment carries a JWT (a link followed while the page is open). */
export function fragmentHasAuth() {
  const hash = location.hash.slice(1);
  return Boolean(hash) && !hash.startsWith("/") && new URLSearchParams(hash).has(AUTH_KEY);
}

/** The sentence a refusal of `hello` (an error frame: `code`, `message`, `reason`) is shown as. */
export function refusalText(frame) {
  if (frame.code === "auth_required") return "This server admits only players signed in through its operator's site.";
  return "Your sign-in was refused.";
}

/**
 * The page shown instead of the lobby and the tables once the server refused this page's `hello`
 * (conn.js's "refused" event: `frame`, the error frame). A view as app.js shows them: attach(el),
 * detach(). `bad_auth` shows the server's message and its `reason`, and offers to go on without
 * signing in (a reload: the JWT is no longer in the URL).
 */
export class SignInNeeded {
  constructor(frame) {
    this.frame = frame;
  }

  attach(el) {
    const f = this.frame;
    const refused = f.code === "bad_auth";
    const detail = refused
      ? h("p", { class: "signin-detail" }, f.message || "the token is refused", f.reason ? ` (reason: ${f.reason})` : "")
      : h("p", { class: "signin-detail muted" }, f.message || "");
    mount(el, h("section", { class: "signin notice error", role: "alert", "data-code": f.code, "data-reason": f.reason || null },
      h("h1", {}, refusalText(f)),
      detail,
      h("p", {}, refused
        ? "Sign in again on the site that sent you here and follow its link to this page."
        : "Sign in on the site that sent you here (or that runs this server) and follow its link to this page."),
      refused ? h("p", {}, h("button", { type: "button", class: "signin-guest", onclick: () => location.reload() },
        "Continue without signing in")) : null));
  }

  detach() {}
}
