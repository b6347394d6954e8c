/** The sign-in view: an admin-scope key in, an HttpOnly session cookie back (POST /dashboard/login). */
import { useState } from "preact/hooks";
import { takeSessionEnd } from "../session-ended.ts";

/** Read once per page load: why this tab came to the sign-in view, if it was signed in before. */
const sessionEnd = takeSessionEnd();

export function LoginPage() {
  const [key, setKey] = useState("");
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const res = await fetch("/dashboard/login", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ key }),
        credentials: "same-origin",
      });
      if (res.ok) {
        location.reload();
        return;
      }
      const body = (await res.json().catch(() => ({}))) as { error?: { message?: string } };
      setError(body.error?.message ?? `Sign-in failed (${res.status}).`);
    } catch {
      setError("The gateway did not answer.");
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="login">
      <form class="login-box" onSubmit={submit}>
        <div class="brand brand-dark">
          <span class="brand-mark">⇄</span> switchyard
        </div>
        <h1>Sign in</h1>
        {sessionEnd && (
          <p class="notice" role="status">
            {sessionEnd === "signed_out_here"
              ? "You signed out."
              : "Your session ended: signed out in another tab, expired, its key was revoked, or it was signed in with an admin token that is not this instance's (another instance's, or this one's before a restart)."}
          </p>
        )}
        <p class="muted">
          This dashboard needs a key with the <code>admin</code> scope. Create one on the gateway's machine with{" "}
          <code>switchyard keys create NAME --scope admin</code>.
        </p>
        <label for="key">Admin key</label>
        <input id="key" name="key" type="password" autocomplete="off" value={key} onInput={(e) => setKey((e.target as HTMLInputElement).value)} required />
        {error && (
          <p class="error-line" role="alert">
            {error}
          </p>
        )}
        <button class="btn btn-primary" type="submit" disabled={busy || key.trim() === ""}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
        <p class="muted small">The browser keeps an HttpOnly session cookie for 12 hours; revoking the key signs it out.</p>
      </form>
    </div>
  );
}
