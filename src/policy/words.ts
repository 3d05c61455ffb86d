/**
 * The classifier's vocabulary: data, not logic (policy/phrase.ts reads it). Words are lower case, in their
 * base form (`deletes`, `deleting` and `deleted` are found through policy/lemma.ts), and match whole words
 * of a tool name after it is split (`getFileInfo` → get, file, info) or of a description's first sentence.
 *
 * - A clear verb leads a name (or ends it: `web_search`, `user_create`); the head verb decides and the words
 *   around it are its objects. An object decides only when it is destructive in every reading
 *   (VERB_ONLY: `search_replace`, `read_write_file`): `get_actor_run` reads, the run is a noun.
 * - Some words are nouns as often as verbs (`email`, `order`, `log`). They act as the verb only when no clear
 *   verb is in the name (`email_user`, `git_log`), and then the description has to settle what they do.
 * - Unknown means mutation; what is not a known verb, noun or report is named in the reason.
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
  evict flush clear empty discard prune yank unpublish drain cordon void rewrite quarantine borrar
  cancel abort rid invalidate annihilate expire redact strip sweep deduct forget unsend scrub liquidate
  exfiltrate tear shut eradicate zap nullify clobber rescind delist
`);

/** Mutations that leave the system or run code: messages, money, releases, execution. Risk high. */
export const OUTBOUND = words(`
  send notify reply forward broadcast tweet retweet publish pay refund withdraw purchase buy sell deploy ship
  merge push exec execute run eval evaluate invoke spawn sudo invite dispatch submit wire remit transact
  checkout payout bid relay disburse airdrop reimburse spend tip dial
`);

/** Other mutations (create, change, move, control a browser or a service): risk medium. */
export const MUTATING = words(`
  create add insert new make put patch set write update upsert save edit modify change alter rename
  pull
  move mv copy cp replace append prepend commit rebase revert restore rollback upload import install
  upgrade downgrade migrate seed trigger start stop restart launch pause resume suspend reschedule
  close archive unarchive lock unlock enable disable approve reject assign unassign grant deny block
  unblock fork clone react follow unfollow subscribe unsubscribe register signup sign apply reserve fill
  click press drag select uncheck navigate goto resize scroll hover focus tap swipe emit attach detach
  mount unmount connect disconnect provision scale rotate sync increment decrement toggle
  configure init initialize increase decrease duplicate transition complete open annotate
  handle process perform do act enqueue dequeue acquire claim reorder pin unpin mute unmute
  hide unhide accept decline confirm login logout authenticate authorize build compile train stash stage
  deprecate bump adjust ack acknowledge dismiss snooze clean cleanup rebuild fix
  resend rerun reopen undo redo retry taint spam rsvp raise lower elevate promote demote kick
  mint burn stake unstake swap bridge tweak ingest reindex download manage type input keypress
  upvote downvote vote favorite favourite bookmark unbookmark unstar unlike watch unwatch handoff
  refresh reload regenerate recalculate reconcile retrain redeploy reassign replay
  onboard offboard enroll unenroll activate deactivate propose draw paste cut crop
  untag unlabel unlink relate ungroup nest switch choose pick use record deregister unregister
  dedupe deduplicate chmod chown mkdir touch renew extend initiate conduct settle consume pop
`);

/**
 * Words that are verbs only: an object that is one of these decides even after a read verb (deny wins:
 * `search_replace`, `read_write_file`, `get_or_delete`), because no reading of it is harmless.
 */
export const VERB_ONLY = words(`
  delete remove destroy erase wipe purge truncate overwrite create insert modify write send replace
  rename upload uninstall kill terminate execute exec revoke publish unpublish upsert edit append
  prepend withdraw put rid unsend del rm
`);

/**
 * Verbs that often name harmless bookkeeping of the server itself (`select_page` chooses which tab later
 * calls use, `start_search` begins a search, `confirm_cost` shows a price): they make a mutation on their
 * own, but they do not outweigh a `readOnlyHint: true` that nothing else contradicts.
 */
export const SOFT_WRITE = words(`
  select open start begin confirm focus hover scroll connect init initialize prepare load refresh reload
  switch use choose pick
`);

/** Bookkeeping verbs that stay soft on any object: they only move the server's own focus or connection. */
export const SOFT_ON_ANY = words(`
  connect select focus hover scroll
`);

/**
 * What a bookkeeping verb may act on and stay soft (`select_page`, `start_search`, `confirm_cost`): the
 * server's own contexts. On anything else (`start_deployment`, `confirm_payment`) it is a plain write.
 */
export const BOOKKEEPING_OBJECTS = words(`
  page pages tab tabs frame window context session search searches scan project workspace board account
  profile element view node nodes cost costs price quote estimate connection directory folder repo
  repository branch environment env mode
`);

/** Words that are nouns as often as verbs, with the risk they carry as a verb. */
export const AMBIGUOUS = withRisk(`
  email:high mail:high sms:high message:high post:high transfer:high payment:high charge:high deposit:high
  order:high trade:high share:high script:high shell:high bash:high command:high text:high invoice:medium
  log:medium record:medium comment:medium tag:medium label:medium link:medium config:medium type:medium
  mark:medium request:medium book:medium star:medium like:medium note:medium draft:medium backup:medium
  check:medium test:medium report:medium memo:medium reply:high chat:high call:high ping:medium branch:medium
  release:medium schedule:medium alert:medium task:medium reminder:medium event:medium store:medium
  index:medium stage:medium block:medium credit:medium debit:high trash:high play:medium fire:high
  python:high python3:high node:medium nodejs:high javascript:high js:high ruby:high perl:high php:high repl:high
  terminal:high powershell:high pwsh:high lua:high deno:high issue:medium route:medium page:medium queue:medium
  snapshot:medium image:medium price:medium rate:medium
`);

/**
 * Read verbs that are nouns as often (`list_push`, `hash_set`, `view_refresh`, `diff_apply`): when one
 * leads a name that ends in a write verb, the name is noun-verb and its last word is the action.
 */
export const READ_NOUN_VERBS = words(`
  list view diff query filter quote estimate return poll score search index trace scan stat match sort map
  chart plot hash stream tail head review audit check test export dump count lookup preview forecast
`);

/** Particles that make a weak read verb another verb (`take_down`, `check_out`, `print_out`). */
export const PARTICLES = words(`
  down out off up over back away
`);

/** Words that introduce an object: a noun-or-verb word followed by one acts as a verb ("charges their card"). */
export const DETERMINERS = words(`
  the a an this that these those all every each its their his her your my our them it him us some any one
  new
`);

/** Auxiliaries: a writing participle after one writes ("Item is removed", "will be deleted"). */
export const AUXILIARIES = words(`
  is are was were be been being will
`);

/**
 * Per weak read verb, the only objects it reads on (`resolve_library_id` reads; `resolve_error`,
 * `resolve_incident` do not), when narrower than SAFE_OBJECTS.
 */
export const WEAK_ONLY_ON = new Map<string, Set<string>>([
  ['resolve', words('id ids name names identifier library symbol handle username alias address addresses hostname host dns path url uri reference')],
]);

/** Per weak read verb, harmless-looking objects that are not harmless for it (`extract_file` unpacks). */
export const WEAK_NOT_ON = new Map<string, Set<string>>([['extract', words('file files archive zip tar')]]);

/**
 * Destroying, sending and paying in other languages (German, Spanish, French, Italian, Portuguese,
 * Dutch, Polish, Russian, Chinese, Japanese, Korean): the classifier reads English, but a name or a
 * description with one of these is held (`loeschen_benutzer`, "Löscht den Benutzer", "删除用户").
 */
export const FOREIGN_WRITES = words(`
  löschen loeschen löscht loescht entfernen entfernt vernichten senden sendet bezahlen überweisen
  eliminar elimina borrar borra suprimir enviar envía envia pagar transferir
  supprimer supprime effacer efface envoyer envoie payer virer
  eliminare cancellare cancella inviare invia pagare
  excluir exclui apagar apaga
  verwijderen verwijdert verzenden betalen
  usuń usun usuwa wyślij wyslij zapłać
  удалить удаляет удалять отправить отправляет оплатить перевести
`);

/** The same in scripts written without spaces: found anywhere in a word. */
export const FOREIGN_WRITE_STEMS = ['删除', '清空', '移除', '发送', '支付', '转账', '削除', '消去', '送信', '支払', '送金', '삭제', '전송', '결제'];

/** Words that join two actions: each one after a conjunction starts a new action (`get_and_transfer`). */
export const CONJUNCTIONS = words(`
  and then or plus also
`);

/** Words a name or a sentence uses for grammar only: skipped. */
export const STOPWORDS = words(`
  a an the of for from by to in on at with into as via its it my your our their all any some this that
  these those per each every one using within about over under between through against across based
  upon onto if whether
`);

/**
 * Read verbs that also name actions with effects (`take_payment`, `capture_charge`, `ping_user`,
 * `print_document`, `verify_microdeposits`): a name they lead reads only when every object is a known
 * harmless noun (SAFE_OBJECTS: `take_screenshot`, `check_status`, `validate_schema`).
 */
export const WEAK_READ_VERBS = words(`
  take capture convert ping print test verify check export dump render extract collect aggregate
  generate compute calculate map scrape transform monitor audit review resolve sample
`);

/**
 * Objects a weak read verb must not act on for it to read: money, people, access, messages, documents
 * (`capture_payment`, `ping_user`, `generate_api_key`, `print_document`).
 */
export const SENSITIVE = words(`
  payment payments charge charges intent microdeposit microdeposits deposit funds money order orders invoice
  subscription trial user users member members customer customers account accounts password key keys token
  secret secrets credential credentials access role roles permission email emails message messages
  document documents refund transfer wallet card cards transaction transactions contract job jobs
`);

/** Verbs that only look. */
export const READ_VERBS = words(`
  get list read fetch search find query lookup look show view describe inspect count stat peek browse
  retrieve compare diff explain analyze analyse summarize summarise preview head tail grep
  cat ls echo ping wait poll validate lint scan trace print dump take capture measure estimate
  calculate compute convert parse render translate detect identify recognize recognise extract match filter
  sort discover explore locate whoami think check test verify has is can exists geocode crawl map observe
  research learn return provide display output quote examine review audit monitor tell answer resolve
  suggest recommend reason debug diagnose assess scrape transcribe classify tokenize embed rank score
  understand interpret decode encode hash format visualize visualise plot chart paginate stream contains
  probe guess infer predict forecast simulate calc generate transform sample gather export collect
  aggregate
`);

/**
 * Harmless objects: what a weak read verb may act on and still only read (`check_status`, `render_chart`,
 * `convert_units`, `validate_schema`, `extract_text`). Never money, people, documents to print, or access.
 */
export const SAFE_OBJECTS = words(`
  status health info information metadata schema schemas syntax format text content contents data json
  yaml xml html markdown md csv url urls uri link links address addresses location coordinates code query
  queries expression regex pattern file files path paths directory folder page pages element elements
  selector image images screenshot snapshot dom accessibility tree console network log logs metric
  metrics trace traces connection connectivity config configuration settings environment env version
  versions dependency dependencies package packages spelling grammar sentiment language entities unit
  units currency currencies timezone time date dates number numbers color colors chart charts graph
  diagram table tables spreadsheet spreadsheets news diff changes report summary usage quota limits availability compatibility
  cost costs price prices estimate readiness
  server service services instance cluster node nodes
  website site webpage sitemap structure outline headings frame frames viewport
  layout style styles css font fonts svg png transcript subtitles captions
  coordinates geocode route routes directions distance elevation weather forecast air quality
  search results result answer answers spec specs docs documentation readme help reference examples
  example sample samples formula math equation output input signature signatures
  certificate cert dns whois ip headers header response latency uptime performance
  a11y contrast lint errors error warnings warning types id ids name names identifier library symbol handle
  username reference namespace existence
`);

/**
 * Nouns that commonly name what a report is about (`directory_tree`, `console_messages`): a name of nouns
 * only reads when it ends in a report noun (READ_NOUNS) or in a plural.
 */
export const OBJECT_NOUNS = words(`
  directory dir file files folder console network system server service database db table user users
  account repo repository project pod node nodes cluster job build pipeline task issue page browser api
  app queue topic cache disk memory cpu graph index library package model session tab tabs window job
  workflow run deployment container image branch commit pull request order payment invoice customer
  product resource resources env environment tool tools server account wallet chain block transaction
  error errors test tests code web
`);

/** Nouns that name a report: a name that ends in one (`directory_tree`, `console_messages`) reads. */
export const READ_NOUNS = words(`
  info information status tree logs messages snapshot screenshot metadata stats statistics health version
  schema schemas details history usage summary contents listing metrics report
  docs documentation help profile balance balances changes diff whoami capabilities limits quota
  overview insights analytics forecast weather quote quotes rates rate price prices time timezone
  search results lookup count counts catalog catalogue inventory list index directory map
  availability healthcheck heartbeat uptime readme manifest spec specification
  definition definitions reference references examples suggestions recommendations trends
  leaderboard ranking rankings feed timeline snapshot location locations coordinates directions distance
  elevation route routes screenshot screenshots size sizes length
  total totals
  transcript transcripts stream tail reader viewer dashboard
`);

/** Agent nouns that name a reading tool (`…-services-reader`, `log_viewer`): as a name's last word, they read. */
export const READ_AGENTS = words(`
  reader viewer fetcher finder searcher getter lister inspector explorer analyzer analyser checker
  validator monitor watcher scanner parser researcher
`);

/**
 * Light verbs whose object names the real action (`start_search`, `perform_lookup`, "Performs a web
 * search"): with a reading action as object they read; otherwise they count as written.
 */
export const LIGHT_VERBS = words(`
  start begin initiate perform do run conduct use execute launch
`);

/** Actions named as nouns that only read (the object of a light verb: `start_search`). */
export const READ_ACTIONS = words(`
  search lookup scan crawl research analysis review inspection audit check find
`);

/**
 * Version-control subcommands that change the local repository although their word reads elsewhere
 * (`git_fetch` updates remote-tracking refs, `git_pull` merges): in a name that says git, they write.
 */
export const GIT_WRITES = words(`
  fetch pull clone checkout switch restore apply am gc
`);

/** Field names whose value says what a generic tool will do (`{"action": "delete"}`). */
export const OPERATION_FIELDS = /^(op|ops|operation|action|actions|verb|intent|task|tasks|cmd_type|do|what|sub_?action)$|action_?type|sub_?command|operation/i;

/**
 * Fields that may name the function a generic tool calls (`fn`, `rpc`, `procedure`, `then`, `on_read`):
 * a value there is judged as a category is (a destructive verb that leads or ends it, a bare verb).
 */
export const GENERIC_OPERATION_FIELDS =
  /^(?:fn|func|function|procedure|rpc|call|handler|action_?name|then|after|after_[a-z]+|post_?action|on_[a-z]+|on-[a-z]+|next|behaviou?r|disposition|strategy|on_?conflict|retention|access|permission|scope|choice)$|^on[A-Z]\w+$/i;

/** Fields naming a category (`type`, `kind`, `mode`): only a clear verb in their value counts, not a noun-or-verb word. */
export const CATEGORY_FIELDS = /^(type|kind|mode)$/i;

/** Field names that carry an HTTP method. */
export const METHOD_FIELDS = /method|(?:^|_|-|[a-z])verb(?:$|_|-)/i;
