/**
 * Settings for Debian's pocketsphinx 0.8 as the `command` recogniser, chosen by measurement (espeak-ng
 * speech, voices en, en-us and en+m3 at 130–190 words a minute; see the report of issue 16):
 * - a word-loop JSGF grammar of answer words beats the default language model (which writes "you" for
 *   "yes" in the en-us voice, "ah"/"que sa" for "cancel", and "ah" for a lost "not");
 * - the grammar keeps "not", "no", "don't" and "never", so a refusal can be heard as one;
 * - it leaves out sound-alikes ("to", "too", "won"): with them in, "two" came out as "to" about half the
 *   time and "one" as "won", and refusing those only made the answer fail, while a lost "not" is caught
 *   by coverage.ts, not by the words;
 * - it keeps "the" for "the second one"; when "the" stands for a lost "not" ("not yes" → "the yeah"), the
 *   consent parser refuses an article that stands before no card.
 */

/** The JSGF grammar (English answer words) to write to a file and pass as `-jsgf FILE`. */
export const POCKETSPHINX_EN_GRAMMAR = `#JSGF V1.0;
grammar consent;
public <utterance> = <word>+;
<word> = yes | yeah | no | not | don't | never | cancel | stop | deny | approve | confirm | go | ahead | please
       | one | two | three | four | five | first | second | third | fourth | fifth | number | card | the | last;
`;

/**
 * The argv of `confirm.device.voice.recogniser` for pocketsphinx with that grammar.
 * @param grammarFile where POCKETSPHINX_EN_GRAMMAR was written.
 */
export function pocketsphinxArgv(grammarFile: string): string[] {
  return ['pocketsphinx_continuous', '-infile', '{file}', '-jsgf', grammarFile, '-logfn', '/dev/null'];
}
