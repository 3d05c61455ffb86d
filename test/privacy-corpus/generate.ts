/**
 * Writes the privacy corpus (test/privacy-corpus/*.json): `node --import tsx test/privacy-corpus/generate.ts`.
 * Values are computed, not pasted: the IBANs are the ISO 13616 registry's examples (checked with ibantools),
 * the cards the networks' public test numbers (checked with the Luhn rule), the phones checked with
 * libphonenumber-js, the tokens built from a fixed-seed generator with FAKE in them. Deterministic: running
 * it again gives the same files (then `npx biome check --write test/privacy-corpus` for the layout).
 * Past 400 lines on purpose: it is mostly the corpus itself (the examples, as data), kept in one place.
 */

import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { friendlyFormatIBAN, isValidIBAN } from 'ibantools';
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { isCardNumber, luhnValid } from '../../src/privacy/detectors/card.js';

type Pos = { text: string; expect: { value: string; label: string }[] };
const dir = fileURLToPath(new URL('./', import.meta.url));
const write = (name: string, about: string, positives: Pos[], negatives: string[]) => {
  for (const p of positives) for (const e of p.expect) if (!p.text.includes(e.value)) throw new Error(`missing ${e.value}`);
  writeFileSync(`${dir}${name}.json`, `${JSON.stringify({ about, positives, negatives }, null, 2)}\n`);
};
const one = (text: string, value: string, label: string): Pos => ({ text, expect: [{ value, label }] });
const fw = (s: string) => s.replace(/[0-9]/g, (d) => String.fromCharCode(0xff10 + Number(d)));
const zw = (s: string, ch: string) => s.replace(/ /g, ch);

// ── IBAN ──
const ibans = [
  'DE89370400440532013000',
  'GB82WEST12345698765432',
  'FR1420041010050500013M02606',
  'NL91ABNA0417164300',
  'ES9121000418450200051332',
  'IT60X0542811101000000123456',
  'CH9300762011623852957',
  'AT611904300234573201',
  'BE68539007547034',
  'PL61109010140000071219812874',
  'NO9386011117947',
  'IE29AIBK93115212345678',
  'DK5000400440116243',
  'FI2112345600000785',
  'PT50000201231234567890154',
];
for (const i of ibans) if (!isValidIBAN(i)) throw new Error(i);
const ibanPos: Pos[] = [];
const tmpl = [
  'Please pay to IBAN %.',
  'IBAN: %',
  'Kontoverbindung % (Sparkasse)',
  '{"iban":"%","amount":12.5}',
  'iban=%;bic=COBADEFFXXX',
  '- account %\n- holder: n/a',
];
ibans.forEach((i, k) => {
  const printed = friendlyFormatIBAN(i)!;
  ibanPos.push(one(tmpl[k % tmpl.length]!.replace('%', i), i, 'IBAN'));
  ibanPos.push(one(`Transfer to ${printed} by Friday.`, printed, 'IBAN'));
});
ibanPos.push(one(`lower case ${friendlyFormatIBAN(ibans[0])!.toLowerCase()} works`, friendlyFormatIBAN(ibans[0])!.toLowerCase(), 'IBAN'));
ibanPos.push(one(`lower ${ibans[1]!.toLowerCase()}.`, ibans[1]!.toLowerCase(), 'IBAN'));
ibanPos.push(one(`wrapped DE89 3704 0044\n0532 0130 00 here`, 'DE89 3704 0044\n0532 0130 00', 'IBAN'));
ibanPos.push(one(`crlf GB82 WEST 1234\r\n5698 7654 32 ok`, 'GB82 WEST 1234\r\n5698 7654 32', 'IBAN'));
for (const ch of ['\u200B', '\u200C', '\u200D', '\u2060', '\uFEFF', '\u00AD']) {
  const v = zw(friendlyFormatIBAN(ibans[2])!, ch);
  ibanPos.push(one(`zero-width ${v} end`, v, 'IBAN'));
}
ibanPos.push(one(`mid-group zw DE8937\u200B0400440532\u200B013000 end`, 'DE8937\u200B0400440532\u200B013000', 'IBAN'));
ibanPos.push(one(`full-width ${fw(friendlyFormatIBAN(ibans[0])!)} end`, fw(friendlyFormatIBAN(ibans[0])!), 'IBAN'));
for (const ch of ['\u202A', '\u202B', '\u202C', '\u202D', '\u202E', '\u2066', '\u2067', '\u2068', '\u2069', '\u200E', '\u200F']) {
  const v = `GB82${ch}WEST1234${ch}5698765432`;
  ibanPos.push(one(`bidi ${v} end`, v, 'IBAN'));
}
const fwAll = (s: string) => s.replace(/[0-9A-Z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0));
ibanPos.push(one(`full-width letters ${fwAll(ibans[1]!)} end`, fwAll(ibans[1]!), 'IBAN'));
ibanPos.push(
  one(
    `arabic-indic DE89 ${'3704 0044 0532 0130 00'.replace(/[0-9]/g, (d) => String.fromCharCode(0x660 + Number(d)))} end`,
    `DE89 ${'3704 0044 0532 0130 00'.replace(/[0-9]/g, (d) => String.fromCharCode(0x660 + Number(d)))}`,
    'IBAN',
  ),
);
ibanPos.push(one('nbsp DE89\u00A03704\u00A00044\u00A00532\u00A00130\u00A000 end', 'DE89\u00A03704\u00A00044\u00A00532\u00A00130\u00A000', 'IBAN'));
ibanPos.push({
  text: `two: ${ibans[0]} and ${friendlyFormatIBAN(ibans[3])} done`,
  expect: [
    { value: ibans[0]!, label: 'IBAN' },
    { value: friendlyFormatIBAN(ibans[3])!, label: 'IBAN' },
  ],
});
for (const bad of ['DE88370400440532013000', 'GB83WEST12345698765432', 'NL92ABNA0417164300', 'AT621904300234573201']) {
  if (isValidIBAN(bad)) throw new Error(bad);
  ibanPos.push(one(`typo in ${bad} here`, bad, 'IBAN_INVALID'));
  ibanPos.push(one(`printed ${friendlyFormatIBAN(bad)} here`, friendlyFormatIBAN(bad)!, 'IBAN_INVALID'));
}
write(
  'iban',
  'IBANs (ISO 13616): the registry example IBANs of 15 countries, printed and electronic, lower case, split by line breaks, zero-width characters, no-break spaces, full-width digits; bad checksums as IBAN_INVALID.',
  ibanPos,
  [
    'DE89 and more text about nothing',
    'product code AB12CD34 in stock',
    'SKU XY12-3456-7890 shipped',
    'qa12 this text goes on and on and on and on for a while',
    'DE8937040044053201 is too short',
    'de88 3704 0044 0532 0130 00 (lower case with a bad checksum)',
    'DE89370400440532013000123 glued to more digits',
    'xDE89370400440532013000 glued to a letter',
    'ticket GB12 is open',
    'sha 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
  ],
);

// ── cards ──
const cards: [string, string][] = [
  ['Visa', '4111111111111111'],
  ['Visa', '4012888888881881'],
  ['Visa 13', '4222222222222'],
  ['Mastercard', '5555555555554444'],
  ['Mastercard', '5105105105105100'],
  ['Mastercard 2-series', '2223003122003222'],
  ['Amex', '378282246310005'],
  ['Amex', '371449635398431'],
  ['Discover', '6011111111111117'],
  ['Discover', '6011000990139424'],
  ['JCB', '3530111333300000'],
  ['JCB', '3566002020360505'],
  ['Diners', '30569309025904'],
  ['Diners', '38520000023237'],
  ['UnionPay', '6200000000000005'],
  ['Maestro', '6759649826438453'],
];
const cardPos: Pos[] = [];
const group = (d: string) => (d.length === 15 ? `${d.slice(0, 4)} ${d.slice(4, 10)} ${d.slice(10)}` : d.replace(/(\d{4})(?=\d)/g, '$1 '));
cards.forEach(([net, d], k) => {
  if (!isCardNumber(d)) throw new Error(`${net} ${d}`);
  cardPos.push(one(`${net} card ${d} exp 12/29`, d, 'CARD'));
  const g = group(d);
  cardPos.push(one(k % 2 ? `{"pan":"${g}"}` : `Paid with ${g}.`, g, 'CARD'));
  if (k % 3 === 0) cardPos.push(one(`dashes ${g.replace(/ /g, '-')} ok`, g.replace(/ /g, '-'), 'CARD'));
});
cardPos.push(one('line break 4111 1111\n1111 1111 end', '4111 1111\n1111 1111', 'CARD'));
for (const ch of ['\u200B', '\u200C', '\u200D', '\u2060', '\uFEFF', '\u00AD'])
  cardPos.push(one(`zw ${zw('5555 5555 5555 4444', ch)} end`, zw('5555 5555 5555 4444', ch), 'CARD'));
cardPos.push(one('no spaces zw 4111\u200B111111111111 end', '4111\u200B111111111111', 'CARD'));
cardPos.push(one(`full-width ${fw('4111 1111 1111 1111')} end`, fw('4111 1111 1111 1111'), 'CARD'));
cardPos.push(one(`full-width plain ${fw('378282246310005')}.`, fw('378282246310005'), 'CARD'));
cardPos.push(one('qty 12 34 4111111111111111 left', '4111111111111111', 'CARD'));
cardPos.push(one('card 4111 1111 1111 1111\n2024-01-15 paid', '4111 1111 1111 1111', 'CARD'));
cardPos.push(one('size=2048 5555 5555 5555 4444 end', '5555 5555 5555 4444', 'CARD'));
for (const v of ['5555.5555.5555.4444', '5555\u20095555\u20095555\u20094444', '5555\u202F5555\u202F5555\u202F4444', '4111\u202A1111\u202C1111\u20661111'])
  cardPos.push(one(`card ${v} end`, v, 'CARD'));
const digitsIn = (s: string, zero: number) => [...s].map((c) => (c >= '0' && c <= '9' ? String.fromCodePoint(zero + Number(c)) : c)).join('');
for (const zero of [0x660, 0x6f0, 0x966, 0x1d7ce])
  cardPos.push(one(`pan ${digitsIn('4111 1111 1111 1111', zero)} end`, digitsIn('4111 1111 1111 1111', zero), 'CARD'));
const cardNeg = ['4111111111111112', '5555555555554445', '378282246310006', '6011111111111118'].map((d) => `Luhn-invalid ${d} is not a card`);
for (const d of cardNeg) if (luhnValid(d.split(' ')[1]!)) throw new Error(d);
write(
  'card',
  "Payment card numbers (ISO/IEC 7812, Luhn): the networks' public test numbers, plain, grouped, dashed, split by line breaks and zero-width characters, full-width digits. Luhn-invalid numbers are negatives.",
  cardPos,
  [
    ...cardNeg,
    'unix ms 1700000000000 and 1733011200123',
    'a 20 digit id 12345678901234567890 here',
    'sha1 da39a3ee5e6b4b0d3255bfef95601890afd80709',
    'in a hash a4111111111111111b there is no card',
    'counter_4111111111111111 is an identifier',
    '1234 5678 9012 3456 (no network starts with 1)',
    'pi 3.1415926535897932384 and v4111.1111.1111.1112',
  ],
);

// ── email ──
const emails = [
  'jane.doe@example.com',
  'j.doe+invoices@mail.example.co.uk',
  'ADMIN@EXAMPLE.ORG',
  'first_last-99@sub.domain.example.io',
  'x@y.de',
  "o'brien@example.ie".replace("'", ''),
  'support%team@example.net',
  'a.b.c.d@e-f.example.travel',
];
const emailPos = emails.flatMap((e, k) => [one(`Contact ${e} for details.`, e, 'EMAIL'), one(k % 2 ? `{"email":"${e}"}` : `<${e}>`, e, 'EMAIL')]);
emailPos.push({
  text: 'cc: a@example.com, b@example.org',
  expect: [
    { value: 'a@example.com', label: 'EMAIL' },
    { value: 'b@example.org', label: 'EMAIL' },
  ],
});
emailPos.push(one('mailto:someone@example.com?subject=hi', 'someone@example.com', 'EMAIL'));
for (const v of [
  'jane\\u0040corp.example',
  'jane%40corp.example',
  'jane&#64;corp.example',
  'jane&#x40;corp.example',
  'jane&commat;corp.example',
  'jane\uFF20corp.example',
  'jane@corp\u200B.example',
  'ja\u200Dne@corp.example',
  'jane@corp\u202E.example',
  'jöhn@corp.example',
  'ops@bücher.example',
  'ｊａｎｅ@corp.example',
])
  emailPos.push(one(`text result: "${v}" end`, v, 'EMAIL'));
emailPos.push(one('profile https://x.example/u/jane@corp.example ok', 'jane@corp.example', 'EMAIL'));
write('email', 'E-mail addresses (RFC 5322 dot-atom subset).', emailPos, [
  'npm i @types/node @scope/pkg',
  'lodash@4.17.21 and react@18.2.0',
  'user@localhost has no domain dot',
  'decorator @Component({ selector: "x" })',
  'a @ b dot com',
  'ssh://git.example.com:22 and foo@',
  'twitter handle @john_smith',
  'retina icon@2x.png and logo@3x.webp, https://cdn.example/img/icon@2x.png',
  'a discount of 100%40 off and 50 &#64; home',
  'email me at jane dot doe at example dot com',
]);

// ── phone ──
const intl = [
  '+49 30 1234567',
  '+49 171 1234567',
  '+44 20 7946 0958',
  '+1 202-555-0143',
  '+1 (202) 555-0143',
  '+33 1 23 45 67 89',
  '+41 44 668 18 00',
  '+31 20 123 4567',
  '+34 912 345 678',
  '+39 06 1234 5678',
  '+43 1 234567',
  '+61 2 9876 5432',
  '+81 3-1234-5678',
  '+4930123456',
  '+49-30-1234567',
];
for (const p of intl) if (!parsePhoneNumberFromString(p)?.isValid()) throw new Error(p);
const phonePos = intl.map((p, k) => one(k % 2 ? `Call me at ${p} tomorrow.` : `{"phone":"${p}"}`, p, 'PHONE'));
phonePos.push(one(`full width ${fw('+49 30 1234567')} end`, fw('+49 30 1234567'), 'PHONE'));
phonePos.push(one('full-width plus \uFF0B49 30 1234567 end', '\uFF0B49 30 1234567', 'PHONE'));
for (const [n, ctx] of [
  ['(030) 1234567', 'Büro'],
  ['030 1234 5678', 'Zentrale'],
  ['030/1234567', 'Fax-Nr.'],
  ['202-555-0143', 'office'],
  ['(202) 555-0143', 'desk'],
  ['202.555.0143', 'us'],
  ['020 7946 0958', 'London office'],
  ['01 23 45 67 89', 'Paris'],
  ['0171 1234567', 'Handy'],
] as const) {
  phonePos.push(one(`${ctx} ${n} (weekdays)`, n, 'PHONE'));
}
phonePos.push(one('Tel: 0301234567', '0301234567', 'PHONE'));
phonePos.push(one('phone number: 2025550143.', '2025550143', 'PHONE'));
phonePos.push(one('mobile 01711234567 after 6pm', '01711234567', 'PHONE'));
phonePos.push(one('call 2025550143 now', '2025550143', 'PHONE'));
phonePos.push(one('fax: ０３０１２３４５６７', '０３０１２３４５６７', 'PHONE'));
phonePos.push(one('call 0033 1 42 68 53 00 today', '0033 1 42 68 53 00', 'PHONE'));
phonePos.push(one('phone: 0044 20 7946 0958', '0044 20 7946 0958', 'PHONE'));
phonePos.push(one('Büro 0049 30 1234567 (weekdays)', '0049 30 1234567', 'PHONE'));
for (const scheme of ['tel', 'callto', 'sms']) phonePos.push(one(`<a href="${scheme}:+442079460958">call</a>`, '+442079460958', 'PHONE'));
phonePos.push(one('[call](tel:+14155552671)', '+14155552671', 'PHONE'));
phonePos.push(one('Phone:+44 20 7946 0958', '+44 20 7946 0958', 'PHONE'));
phonePos.push(one('arabic +٤٩ ٣٠ ١٢٣٤٥٦٧ end', '+٤٩ ٣٠ ١٢٣٤٥٦٧', 'PHONE'));
phonePos.push(one('zero-width +49\u200B30\u200B1234567 end', '+49\u200B30\u200B1234567', 'PHONE'));
write('phone', 'Phone numbers: E.164 of 11 regions, national forms with a phone grouping or a context word (default regions).', phonePos, [
  'Order 0301234567 shipped',
  'Invoice no. 030 1234 5678',
  'order #2025550143',
  'unix ms 1700000000000 and s 1733011200',
  'at 2024-01-15T10:30:00Z and 2024-01-15 10:30:00',
  'dates 15.01.2024, 01/15/2024, 2024/01/15',
  'version 1.2.3, v10.24.1, 2.0.0-rc.1+build.5',
  'amounts €1.234.567,89 and $1,234,567.00 and 1 234 567 €',
  'IPs 192.168.100.200 and 10.0.0.1:8080',
  'uuid 123e4567-e89b-12d3-a456-426614174000',
  'ISBN 978-3-16-148410-0',
  'growth +3.5% to +1234 users',
  'ref 0049 30 1234567',
  'bare 3012345678 without any context',
  'range 100-200-3000 items',
  'ticket 555-123-4567',
  'timecode 10:30:45.123',
  'tz offset 10:30:00+0100 and 00:00:00',
  'id 000123456789 and ref 0044 20 7946 0958',
]);

// ── secrets ──
const alnum = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
let seed = 7;
const rnd = (n: number, chars = alnum) => {
  let s = '';
  for (let i = 0; i < n; i++) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    s += chars[Math.floor(seed / 65536) % chars.length];
  }
  return s;
};
const b64u = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
const jwt = `${b64u({ alg: 'HS256', typ: 'JWT' })}.${b64u({ sub: 'FAKE-user', iat: 1700000000 })}.${rnd(43, `${alnum}-_`)}`;
const jwtNone = `${b64u({ alg: 'none' })}.${b64u({ sub: 'x' })}.`;
const pemBody = Array.from({ length: 4 }, () => rnd(64, `${alnum}+/`)).join('\n');
const tokens: [string, string][] = [
  ['GitHub token', `ghp_FAKE${rnd(32)}`],
  ['GitHub token', `gho_FAKE${rnd(32)}`],
  ['GitHub token', `ghu_FAKE${rnd(32)}`],
  ['GitHub token', `ghs_FAKE${rnd(32)}`],
  ['GitHub token', `ghr_FAKE${rnd(32)}`],
  ['GitHub token', `github_pat_11FAKE${rnd(16)}_${rnd(59)}`],
  ['OpenAI API key', `sk-FAKE${rnd(20)}T3BlbkFJ${rnd(20)}`],
  ['OpenAI API key', `sk-proj-FAKE${rnd(40)}_${rnd(30)}`],
  ['Anthropic API key', `sk-ant-api03-FAKE${rnd(80, `${alnum}-_`)}AA`],
  ['AWS access key', 'AKIAFAKE1234567890AB'],
  ['AWS access key', 'ASIAFAKE0987654321ZY'],
  ['Slack token', `xoxb-123456789012-1234567890123-FAKE${rnd(20)}`],
  ['Slack token', `xoxp-123456789012-123456789012-1234567890123-${rnd(32, '0123456789abcdef')}`],
  ['Slack token', `xoxa-2-FAKE${rnd(30)}`],
  ['Slack token', `xoxr-FAKE${rnd(30)}`],
  ['Slack token', `xoxs-FAKE${rnd(30)}`],
  ['Slack webhook URL', `https://hooks.slack.com/services/T00000000/B00000000/FAKE${rnd(20)}`],
  ['Stripe key', `sk_live_FAKE${rnd(24)}`],
  ['Stripe key', `sk_test_FAKE${rnd(24)}`],
  ['Stripe key', `rk_live_FAKE${rnd(24)}`],
  ['Stripe key', `pk_live_FAKE${rnd(24)}`],
  ['Hugging Face token', `hf_FAKE${rnd(30)}`],
  ['Google API key', `AIzaFAKE${rnd(31, `${alnum}-_`)}`],
  ['JWT', jwt],
  ['JWT', jwtNone],
  ['PEM private key', `-----BEGIN PRIVATE KEY-----\n${pemBody}\n-----END PRIVATE KEY-----`],
  ['PEM private key', `-----BEGIN RSA PRIVATE KEY-----\n${pemBody}\n-----END RSA PRIVATE KEY-----`],
  ['PEM private key', `-----BEGIN EC PRIVATE KEY-----\n${pemBody}\n-----END EC PRIVATE KEY-----`],
  ['PEM private key', `-----BEGIN OPENSSH PRIVATE KEY-----\n${pemBody}\n-----END OPENSSH PRIVATE KEY-----`],
  ['PEM private key', `-----BEGIN ENCRYPTED PRIVATE KEY-----\n${pemBody}\n-----END ENCRYPTED PRIVATE KEY-----`],
];
const secretPos: Pos[] = tokens.map(([, t], k) => one(k % 3 === 0 ? `token is ${t} ok` : k % 3 === 1 ? `{"value":"${t}"}` : `export THING=${t}`, t, 'SECRET'));
for (const [, t] of tokens.slice(0, 26).filter((_, k) => k % 3 === 0)) {
  const b = Buffer.from(`${t}`).toString('base64');
  secretPos.push(one(`encoded: ${b} (base64)`, b, 'SECRET'));
}
const pem = tokens.find(([d]) => d === 'PEM private key')![1];
const pemLower = `-----begin rsa private key-----\n${pemBody}\n-----end rsa private key-----`;
secretPos.push(one(`key:\n${pemLower}\ndone`, pemLower, 'SECRET'));
secretPos.push(one(`tls.key: ${Buffer.from(pem).toString('base64')}`, Buffer.from(pem).toString('base64'), 'SECRET'));
write('secret', 'Credentials with a known shape (obviously fake, shape-valid: each carries FAKE or a fake body) and the same Base64-encoded.', secretPos, [
  'sk-learn is a library; task-runner-with-a-very-long-name-here is a package',
  'ghp_short and gho_ are prefixes only',
  'AKIA is the prefix of AWS key ids, AKIAlowercase1234567 is not one',
  `header ${b64u({ foo: 1 })}.${b64u({ bar: 2 })}.sig has no alg`,
  `-----BEGIN PUBLIC KEY-----\n${pemBody}\n-----END PUBLIC KEY-----`,
  `-----BEGIN CERTIFICATE-----\n${pemBody}\n-----END CERTIFICATE-----`,
  `harmless base64 ${Buffer.from('The quick brown fox jumps over the lazy dog, twice over.').toString('base64')}`,
  `binary base64 ${rnd(88, `${alnum}+/`)}`,
  'hf_hub_download(repo_id="gpt2") and xoxo-gossip',
  'the AbstractSingletonProxyFactoryBeanProvider class',
  'pk_live is a publishable key prefix',
]);

// ── keyed values ──
const keyedPos: Pos[] = [
  one('password=hunter2', 'hunter2', 'SECRET'),
  one('db login: user=app password=Tr0ub4dor&3x', 'Tr0ub4dor&3x', 'SECRET'),
  one('password=Tr0ub4dor&3xtra;Secret next', 'Tr0ub4dor&3xtra;Secret', 'SECRET'),
  one('token=abc123;xyz789', 'abc123;xyz789', 'SECRET'),
  one('see a=1&password=pw-in-query&b=2', 'pw-in-query', 'SECRET'),
  one('GET /x?id=7&token=t0k#frag', 't0k', 'SECRET'),
  one('password=hunter2; then restart', 'hunter2', 'SECRET'),
  one('"cmd": "mysql --password=rootpw2 --host db"', 'rootpw2', 'SECRET'),
  one('password_reset_token=prt-4f9a2c', 'prt-4f9a2c', 'SECRET'),
  one('secret: p,a;s}s]w#o rd', 'p,a;s}s]w#o rd', 'SECRET'),
  one('pass\u200Bword=hunter2x', 'hunter2x', 'SECRET'),
  one('a=1&amp;token=t0k3n&amp;b=2', 't0k3n', 'SECRET'),
  one('api_key: abc123', 'abc123', 'SECRET'),
  one('config:\n  api_key: abc123def\n  region: eu', 'abc123def', 'SECRET'),
  one('{"db_password": "correct horse battery staple"}', 'correct horse battery staple', 'SECRET'),
  one("{ clientSecret: 'c1i3nt-s3cr3t' }", 'c1i3nt-s3cr3t', 'SECRET'),
  one('Authorization: Bearer abcdef0123456789', 'abcdef0123456789', 'SECRET'),
  one('Authorization: Basic dXNlcjpwYXNzd29yZA==', 'dXNlcjpwYXNzd29yZA==', 'SECRET'),
  one(`Authorization: Bearer ${jwt}`, jwt, 'SECRET'),
  one('GET /api?token=t0k3nv4lu3&page=2', 't0k3nv4lu3', 'SECRET'),
  one('https://example.com/cb?access_token=ya29.FAKE-abc&state=1', 'ya29.FAKE-abc', 'SECRET'),
  one('postgres://app:s3cr3tpw@db.internal:5432/app', 's3cr3tpw', 'SECRET'),
  one('redis://:onlypass@cache:6379', 'onlypass', 'SECRET'),
  one('DB_PASSWORD=pg-pass-42', 'pg-pass-42', 'SECRET'),
  one('export NPM_TOKEN=npm_FAKE0123456789', 'npm_FAKE0123456789', 'SECRET'),
  one('AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYFAKEKEY', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYFAKEKEY', 'SECRET'),
  one('X-Api-Key: 9f8e7d6c5b4a', '9f8e7d6c5b4a', 'SECRET'),
  one('Cookie: sid=abc123xyz', 'sid=abc123xyz', 'SECRET'),
  one("private_key = 'k3y-m4t3r14l'", 'k3y-m4t3r14l', 'SECRET'),
  one('credentials: "u:p"', 'u:p', 'SECRET'),
  one('pwd=letmein', 'letmein', 'SECRET'),
  one('accessToken="at-123"', 'at-123', 'SECRET'),
  one('secret: s3cr3t-value # comment', 's3cr3t-value', 'SECRET'),
  one('mysql --password=rootpw --host db', 'rootpw', 'SECRET'),
];
write(
  'keyed',
  'Values behind secret-naming keys in text: key=value, YAML, JSON-in-text, Authorization headers, query strings, URL userinfo. Only the value is masked.',
  keyedPos,
  [
    'max_tokens=1024 and token_count: 57',
    '{"tokens": 12, "max_tokens": 4096}',
    'primary_key: id, sort_key: created_at',
    'keyboard: us; author: someone; passage: long',
    'Please reset your password before Friday.',
    'The token expired yesterday; ask for a new token.',
    'password: null',
    `password=\${DB_PASSWORD}`,
    'password: ********',
    'if (password == confirm) return;',
    'const token = getToken();',
    'token_type: Bearer',
    'password_policy: strict',
    'auth_method: oauth2',
    'token = req.headers.token;',
    'secret_name: prod-db',
    'interface Login { password: string; token?: string }',
    'tokens => tokens.length',
    'tokens_used=1234 token_limit=4096 max_tokens: 100',
    'password_changed_at: 2024-01-15',
    'a=1&b=2&page=3',
  ],
);

// ── names and patterns ──
const customPos: Pos[] = [
  one('Signed: Jane Doe, 2024', 'Jane Doe', 'NAME'),
  one('signed by JANE DOE', 'JANE DOE', 'NAME'),
  one('from jane\n doe with love', 'jane\n doe', 'NAME'),
  one('Frau Erika Mustermann wohnt hier', 'Erika Mustermann', 'NAME'),
  one('Zoë Ångström wrote it', 'Zoë Ångström', 'NAME'),
  one('Mustermann alone', 'Mustermann', 'NAME'),
  one('user Jane_Doe logged in', 'Jane_Doe', 'NAME'),
  one('by Ja\u200Bne D\u200Doe today', 'Ja\u200Bne D\u200Doe', 'NAME'),
  one('by Ｊａｎｅ Ｄｏｅ today', 'Ｊａｎｅ Ｄｏｅ', 'NAME'),
  one('employee EMP-123456 left', 'EMP-123456', 'EMPLOYEE_ID'),
  one('see case #12345 for details', '12345', 'CASE'),
];
write('custom', 'privacy.names and privacy.patterns (see config.json): whole words, case-insensitive; whole match or group 1.', customPos, [
  'Janet Doerr is not configured',
  'Annual report by Doe-Industries',
  'Mustermannstraße 5',
  'EMP-12345 has five digits',
  'case 12345 without the hash',
]);
writeFileSync(
  `${dir}config.json`,
  `${JSON.stringify(
    {
      names: ['Jane Doe', 'Erika Mustermann', 'Mustermann', 'Zoë Ångström'],
      patterns: [
        { label: 'EMPLOYEE_ID', pattern: 'EMP-\\d{6}\\b' },
        { label: 'CASE', pattern: 'case #(\\d{5})' },
      ],
    },
    null,
    2,
  )}\n`,
);

// ── look-alikes of every kind ──
write(
  'lookalike',
  'Values that look private and are not: identifiers, numbers, dates, hashes, versions, addresses, amounts, prose.',
  [],
  [
    'Order #100042357 shipped on 2024-03-05',
    'Invoice INV-2024-000123 total 1,499.00 EUR',
    'order_id=9876543210123 status=paid',
    'ts=1700000000000 level=info msg="started"',
    '2024-01-15T10:30:00.123Z 2024-01-15T10:30:00+01:00',
    'Mon, 15 Jan 2024 10:30:00 GMT',
    'uuid: 550e8400-e29b-41d4-a716-446655440000',
    'commit 3f786850e387550fdab836ed7e6dc881de23001b',
    'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    'semver 1.13.16 and 20.19.43 and 0.0.0-20240115103000-abcdef123456',
    'IPv4 203.0.113.195 IPv6 2001:db8::ff00:42:8329',
    'price $12,345.67, €9.999,00, 1 000 000 ¥',
    `base64 of text: ${Buffer.from('hello world, this is only a harmless sentence').toString('base64')}`,
    'The password field must have 12 characters.',
    'Tokens are counted per request; see the token docs.',
    'Use your API key from the dashboard.',
    'npm install libphonenumber-js@1.13.16',
    'line 12345678, column 42',
    'port 54321, pid 1234567',
    'coordinates 52.520008, 13.404954',
    'ISBN 978-0-306-40615-7 and EAN 4006381333931',
    'tracking number 1Z999AA10123456784',
    'const x = 0x1234567890abcdef;',
    'matrix 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20',
    '"id": 1733011200000, "count": 12',
    'CVE-2024-12345 fixed in 2.4.1',
    'The author kept the keyboard in the passage.',
  ],
);
