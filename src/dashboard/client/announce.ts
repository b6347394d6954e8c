/**
 * The dashboard's live region: one visually hidden `role="status"` element (`#announcer`, polite,
 * atomic) outside the Preact tree, so a screen reader says what an action did where nothing on screen
 * says it at the focus ("Key ci revoked." after a confirmed Revoke: the row's buttons are gone).
 * WAI-ARIA 1.2, status role: the region exists before its text changes (`mountAnnouncer` at start),
 * else some readers do not say the first message.
 */

/** The live region, made once and kept at the end of `<body>`. */
export function mountAnnouncer(): HTMLElement {
  let el = document.getElementById("announcer");
  if (!el) {
    el = document.createElement("div");
    el.id = "announcer";
    el.className = "sr-only";
    el.setAttribute("role", "status");
    el.setAttribute("aria-live", "polite");
    el.setAttribute("aria-atomic", "true");
    document.body.appendChild(el);
  }
  return el;
}

/**
 * Says `text` through the live region. The text is replaced, not appended (the region holds the
 * latest message only); the same message twice in a row is said again (emptied first, then set on
 * the next frame).
 */
export function announce(text: string): void {
  const el = mountAnnouncer();
  if (el.textContent === text) {
    el.textContent = "";
    requestAnimationFrame(() => (el.textContent = text));
  } else el.textContent = text;
}
