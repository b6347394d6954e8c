/**
 * Why the page went to the sign-in view, carried across the reload that takes it there (this tab's
 * sessionStorage; nothing secret): the sign-in view says so instead of appearing without a word.
 */
const KEY = "switchyard-session-ended";

/** How the session ended: this tab's Sign out, or the server ended it (another tab, expiry, a revoked key). */
export type SessionEnd = "signed_out_here" | "ended";

/** Reloads the page into the sign-in view, remembering why. */
export function reloadToSignIn(why: SessionEnd, to?: string): void {
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
