/**
 * Why the page went to the sign-in view, carried across the reload that takes it there (this tab's
 * sessionStorage; nothing secret): the sign-in view says so instead of appearing without a word.
 */
const KEY = "switchyard-session-ended";

/** How the session ended: this tab's Sign out, or the server ended it (another tab, expiry, a revoked key). */
export type SessionEnd = "signed_out_here" | "ended";

/** This tab's Sign out has begun (set before its request is sent). */
let signingOut = false;

/**
 * Marks this tab's Sign out as begun: the session's end it then sees before the sign-out's own answer
 * (its live event stream's `signed_out` or its reconnect's 401, a read's 401) is this sign-out, not an
 * end from elsewhere (when the answer was slow, the view said "Your session ended…" to the tab that
 * signed out: seen in a full test run at load 25).
 */
export function beginSignOut(): void {
  signingOut = true;
}

/** Reloads the page into the sign-in view, remembering why (this tab's Sign out, once begun, wins). */
export function reloadToSignIn(why: SessionEnd, to?: string): void {
  if (signingOut) why = "signed_out_here";
  try {
    sessionStorage.setItem(KEY, why);
  } catch {
    // storage refused (private mode): the sign-in view shows without the notice
  }
  if (to) location.href = to;
  else location.reload();
}

/** The reason left by {@link reloadToSignIn}, read once (cleared here), or undefined. */
export function takeSessionEnd(): SessionEnd | undefined {
  try {
    const v = sessionStorage.getItem(KEY);
    sessionStorage.removeItem(KEY);
    return v === "signed_out_here" || v === "ended" ? v : undefined;
  } catch {
    return undefined;
  }
}
