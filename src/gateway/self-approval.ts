/**
 * The self-approval warning: with `confirm.elicitation` on, a client that can answer elicitation could
 * approve its own calls (an autonomous agent answers the question itself). Said when such a client
 * connects, not at start: a gate whose clients cannot elicit never asks them, so the warning would be
 * noise that teaches people to skip warnings. Said once per gate (not per session: an HTTP gate opens
 * many), naming the first client that can.
 */

/** Whether a client's `elicitation` capability allows form mode: a bare `elicitation: {}` means form (spec 2025-11-25); `{ url: {} }` alone does not. */
export function declaresFormElicitation(elicitation: unknown): boolean {
  if (typeof elicitation !== 'object' || elicitation === null || Array.isArray(elicitation)) return false;
  const e = elicitation as Record<string, unknown>;
  return e.form !== undefined || e.url === undefined;
}

/**
 * Builds the once-per-gate notice.
 * @param confirm the config's `confirm.elicitation` and `confirm.mode` (pending mode never asks the client).
 * @returns a function to call with each connecting client's name and `elicitation` capability.
 */
export function createSelfApprovalNotice(
  confirm: { elicitation: boolean; mode: 'wait' | 'pending' },
  log: (message: string) => void,
): (clientName: string, elicitation: unknown) => void {
  let said = !confirm.elicitation || confirm.mode === 'pending';
  return (clientName, elicitation) => {
    if (said || !declaresFormElicitation(elicitation)) return;
    said = true;
    log(
      `warning: the client ${JSON.stringify(clientName.slice(0, 80))} can answer elicitation and confirm.elicitation is on: an autonomous client can answer elicitation itself (self-approval). For such clients set confirm.elicitation: false, so that only the page, webhook or terminal can approve.`,
    );
  };
}
