/**
 * The classifier's vocabulary: data, not logic (policy/classify.ts reads it). Words are lower case and
 * match whole words of a tool name after it is split (`getFileInfo` → get, file, info).
 *
 * - A mutating word anywhere makes the call a mutation, whatever else the name says (deny wins):
 *   `get_and_delete` is a mutation.
 * - Some words are nouns as often as verbs (`email`, `order`, `transfer`). They mutate too, except as the
 *   object of a leading read verb with no conjunction before them: `get_email` reads, `send_email`,
 *   `email_user` and `get_and_transfer` do not.
 * - A name is read-only only when a read verb leads it (after any namespace prefix) or it ends in a
 *   report noun (`directory_tree`), and nothing mutates. A name of unknown words is a mutation.
 * Add synonyms here; each list says what it means for the verdict and its risk.
 */
import type { Risk } from '../types.js';

/** A word list written as text: one space or line break between words. */
function words(text: string): Set<string> {
  return new Set(text.trim().split(/\s+/));
}

/** `word:risk` pairs written as text. */
function withRisk(text: string): Map<string, Risk> {
  return new Map(
    text
      .trim()
      .split(/\s+/)
      .map((p) => p.split(':') as [string, Risk]),
  );
}

/** Mutations that destroy or cannot be taken back: risk high. */
export const DESTRUCTIVE = words(`
  delete del remove rm rmdir unlink drop destroy purge wipe erase truncate terminate kill shred format
  reset revoke overwrite uninstall obliterate nuke expunge shutdown reboot deprovision decommission ban
  evict flush clear empty trash discard prune yank unpublish drain cordon void rewrite quarantine borrar
`);

/** Mutations that leave the system or run code: messages, money, releases, execution. Risk high. */
export const OUTBOUND = words(`
  send notify reply forward broadcast tweet publish pay refund withdraw purchase buy sell deploy ship
  merge push exec execute run eval evaluate invoke spawn sudo invite dispatch submit wire remit
`);

/** Other mutations (create, change, move, control a browser or a service): risk medium. */
export const MUTATING = words(`
  create add insert new make put patch set write update upsert save store edit modify change alter rename
  move mv copy cp replace append prepend commit rebase revert restore rollback upload import install
  upgrade downgrade migrate seed trigger start stop restart launch pause resume suspend schedule cancel
  close archive unarchive lock unlock enable disable approve reject assign unassign grant deny block
  unblock fork clone react follow unfollow subscribe unsubscribe register signup sign apply reserve fill
  click press drag select uncheck navigate goto resize scroll hover focus tap swipe emit attach detach
  mount unmount connect disconnect provision scale rotate generate sync increment decrement toggle
  configure init initialize track increase decrease duplicate transition complete resolve open annotate
  handle process perform do act call enqueue dequeue acquire release claim reorder pin unpin mute unmute
  hide unhide accept decline confirm login logout authenticate authorize build compile train stash stage
  unstage deprecate bump credit debit adjust ack acknowledge dismiss snooze clean cleanup rebuild fix
  resend rerun reopen undo redo retry taint checkout spam rsvp raise lower elevate promote demote kick
  mint burn stake unstake swap bridge tweak ingest index reindex download
`);

/** Words that are nouns as often as verbs, with the risk they carry as a verb. */
export const AMBIGUOUS = withRisk(`
  email:high mail:high sms:high message:high post:high transfer:high payment:high charge:high deposit:high
  order:high trade:high share:high script:high shell:high bash:high command:high text:high invoice:medium
  log:medium record:medium comment:medium tag:medium label:medium link:medium config:medium type:medium
  mark:medium request:medium book:medium star:medium like:medium note:medium draft:medium backup:medium
  check:medium test:medium
`);

/** Words that join two actions: an ambiguous word after one is a verb (`get_and_transfer`). */
export const CONJUNCTIONS = words(`
  and then or plus also
`);

/**
 * Read verbs that also name actions with effects (`take_payment`, `capture_charge`, `ping_user`,
 * `print_document`, `verify_microdeposits`): a name they lead reads only when nothing but report nouns
 * follows (`take_screenshot`, `check_status`, `ping`).
 */
export const WEAK_READ_VERBS = words(`
  take capture convert ping print test verify check validate watch export dump render extract
`);

/**
 * Nouns that commonly name what a report is about (`directory_tree`, `console_messages`): a name that ends
 * in a report noun reads only when every word before it is one of these (or a namespace prefix).
 */
export const OBJECT_NOUNS = words(`
  directory dir file files folder console network system server service database db table user users
  account repo repository project pod node nodes cluster job build pipeline task issue page browser api
  app queue topic cache disk memory cpu graph index library package model session tab tabs window job
  workflow run deployment container image branch commit pull request order payment invoice customer
  product resource resources env environment tool tools server account wallet chain block transaction
  error errors test tests code
`);

/** Verbs that only look. */
export const READ_VERBS = words(`
  get list read fetch search find query lookup look show view describe inspect count stat peek browse
  retrieve export compare diff explain analyze analyse summarize summarise preview head tail grep
  cat ls echo ping watch wait poll validate lint scan trace print dump take capture measure estimate
  calculate compute convert parse render translate detect identify recognize extract match filter sort
  discover explore locate whoami think check test verify has is can exists
`);

/** Nouns that name a report: a name that ends in one (`directory_tree`, `console_messages`) reads. */
export const READ_NOUNS = words(`
  info information status tree logs messages snapshot screenshot metadata stats statistics health version
  versions schema schemas details history usage summary contents listing requests events metrics report
  docs documentation help profile balance balances changes diff whoami capabilities limits quota
`);

/** Field names whose value says what a generic tool will do (`{"action": "delete"}`). */
export const OPERATION_FIELDS = /^(op|ops|operation|action|actions|verb|intent|task|tasks|cmd_type)$|action_?type|sub_?command|operation/i;

/** Fields naming a category (`type`, `kind`, `mode`): only a clear verb in their value counts, not a noun-or-verb word. */
export const CATEGORY_FIELDS = /^(type|kind|mode)$/i;

/** Field names that carry an HTTP method. */
export const METHOD_FIELDS = /method|verb/i;
