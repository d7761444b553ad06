/**
 * @module retrieval/concepts
 * A small hand-written lexicon of near-synonyms for common tool-use verbs and nouns, used
 * for query expansion: a request worded differently from a tool's description ("remember",
 * "look up", "mail", "erase") also matches the tool's words ("store", "search", "email",
 * "delete") at a low weight.
 *
 * Said plainly: the verb groups are general English, but the topic groups (weather, hotels,
 * horoscopes, recipes, crypto, jokes…) were written with the bench catalogs (MetaTool's
 * ChatGPT plugins, Seal-Tools) in view, so their gain on those benches overstates what a
 * different catalog will see (docs/retrieval.md). Words are matched by their Porter stems;
 * where a stem would merge unrelated words ("news" → "new", "wellness" → "well") the stemmer
 * protects them (stemmer.ts), and concepts.test.ts lists the remaining cross-group merges.
 *
 * A word may sit in several groups; its expansions are the union. Entries with a space are
 * phrases, matched on consecutive query words ("look up"). Function words are never
 * expanded (the caller passes only content terms).
 */
import { functionWords, terms } from './tokenizer.ts';

const groups: string[][] = [
  // Finding and reading
  ['search', 'find', 'look up', 'lookup', 'query', 'seek', 'locate', 'discover', 'retrieve', 'fetch', 'browse'],
  ['retrieve', 'fetch', 'obtain', 'download', 'pull', 'load', 'read', 'open', 'access'],
  ['list', 'enumerate', 'browse', 'show all', 'catalog', 'index', 'directory'],
  ['read', 'open', 'view', 'display', 'inspect', 'examine', 'see'],
  ['check', 'verify', 'validate', 'confirm', 'test', 'inspect', 'audit'],
  ['recommend', 'suggest', 'recommendation', 'suggestion', 'advice', 'advise', 'idea', 'tip'],
  ['compare', 'comparison', 'versus', 'contrast', 'difference'],
  ['analyze', 'analyse', 'analysis', 'evaluate', 'assess', 'examine', 'review', 'insight', 'statistics', 'stats'],
  ['summarize', 'summarise', 'summary', 'digest', 'abstract', 'overview', 'recap', 'tldr', 'condense'],
  ['explain', 'explanation', 'describe', 'description', 'define', 'definition', 'meaning', 'clarify'],
  ['monitor', 'track', 'watch', 'follow', 'observe', 'status'],
  ['count', 'number', 'total', 'tally', 'how many'],
  ['detect', 'identify', 'recognize', 'recognise', 'classify', 'detection', 'recognition'],
  ['extract', 'parse', 'scrape', 'crawl', 'harvest'],
  ['filter', 'sort', 'rank', 'order', 'organize', 'organise'],
  // Making and changing
  ['create', 'add', 'make', 'new', 'generate', 'build', 'produce', 'insert', 'register', 'compose', 'write', 'craft'],
  ['update', 'edit', 'modify', 'change', 'alter', 'amend', 'revise', 'patch', 'set', 'adjust'],
  ['delete', 'remove', 'erase', 'drop', 'destroy', 'discard', 'purge', 'clear', 'wipe', 'trash', 'uninstall'],
  ['cancel', 'abort', 'revoke', 'terminate', 'stop', 'unsubscribe', 'withdraw'],
  ['rename', 'move', 'relocate', 'transfer'],
  ['copy', 'duplicate', 'clone', 'replicate'],
  ['merge', 'combine', 'join', 'concatenate', 'append'],
  ['split', 'divide', 'separate', 'partition'],
  ['convert', 'transform', 'translate', 'conversion', 'change into', 'export', 'format'],
  ['upload', 'attach', 'import', 'submit'],
  ['install', 'setup', 'set up', 'deploy', 'configure', 'configuration', 'provision'],
  ['start', 'begin', 'launch', 'run', 'execute', 'trigger', 'invoke', 'kick off'],
  ['restart', 'reboot', 'reload', 'refresh', 'reset'],
  ['fix', 'repair', 'debug', 'troubleshoot', 'resolve', 'solve'],
  ['draw', 'design', 'sketch', 'illustrate', 'drawing', 'illustration', 'diagram', 'chart', 'plot', 'graph', 'visualize', 'visualise'],
  ['image', 'picture', 'photo', 'photograph', 'pic', 'img', 'graphic'],
  ['video', 'movie', 'film', 'clip', 'footage'],
  ['music', 'song', 'track', 'tune', 'audio', 'playlist'],
  ['audio', 'sound', 'voice', 'speech', 'spoken'],
  ['transcribe', 'transcription', 'transcript', 'speech to text', 'dictation', 'caption', 'subtitle'],
  ['speak', 'read aloud', 'text to speech', 'tts', 'voice', 'pronounce', 'pronunciation'],
  ['resize', 'crop', 'scale', 'compress', 'shrink', 'enlarge'],
  // Memory and notes
  ['remember', 'memorize', 'memorise', 'memory', 'recall', 'knowledge', 'store', 'save', 'keep', 'persist', 'note', 'record', 'fact', 'observation'],
  ['store', 'save', 'keep', 'persist', 'archive', 'backup', 'storage', 'preserve'],
  ['note', 'notes', 'memo', 'notebook', 'jot', 'journal', 'diary', 'log'],
  ['preference', 'prefer', 'like', 'favorite', 'favourite', 'setting', 'option'],
  ['forget', 'delete', 'remove', 'erase'],
  ['bookmark', 'favorite', 'favourite', 'pin', 'star'],
  // Communication
  ['send', 'email', 'mail', 'message', 'notify', 'notification', 'deliver', 'dispatch', 'forward'],
  ['email', 'mail', 'e-mail', 'inbox', 'gmail', 'outlook', 'mailbox'],
  ['message', 'chat', 'text', 'sms', 'dm', 'im', 'slack', 'conversation'],
  ['notify', 'notification', 'alert', 'remind', 'reminder', 'ping', 'warn', 'warning'],
  ['call', 'phone', 'dial', 'ring', 'telephone'],
  ['reply', 'respond', 'answer', 'response'],
  ['post', 'publish', 'share', 'tweet', 'broadcast'],
  ['contact', 'person', 'people', 'address book', 'phonebook'],
  ['comment', 'feedback', 'review', 'rating', 'opinion'],
  // Time and planning
  ['schedule', 'calendar', 'meeting', 'appointment', 'event', 'agenda', 'plan', 'arrange'],
  ['book', 'reserve', 'reservation', 'booking', 'schedule'],
  ['remind', 'reminder', 'alarm', 'timer', 'alert'],
  ['task', 'todo', 'to do', 'chore', 'assignment', 'ticket', 'issue'],
  ['deadline', 'due', 'due date'],
  ['time', 'clock', 'hour', 'timezone', 'time zone'],
  ['date', 'day', 'calendar'],
  ['holiday', 'vacation', 'trip', 'travel', 'journey', 'tour'],
  // Weather and places
  ['weather', 'forecast', 'temperature', 'rain', 'climate', 'meteorological'],
  ['location', 'place', 'address', 'map', 'geocode', 'coordinates', 'gps', 'where'],
  ['direction', 'route', 'navigate', 'navigation', 'map', 'itinerary'],
  ['nearby', 'near', 'around', 'close by', 'local'],
  ['restaurant', 'food', 'eat', 'dining', 'cafe', 'meal', 'cuisine', 'dinner', 'lunch'],
  ['recipe', 'cook', 'cooking', 'dish', 'ingredient', 'meal'],
  ['hotel', 'accommodation', 'lodging', 'stay', 'room', 'airbnb', 'hostel'],
  ['flight', 'fly', 'airline', 'plane', 'airport', 'air ticket'],
  ['car', 'vehicle', 'auto', 'automobile'],
  ['taxi', 'ride', 'cab', 'uber', 'lift'],
  ['house', 'home', 'apartment', 'property', 'real estate', 'housing'],
  // Language and text
  ['translate', 'translation', 'translator', 'language', 'multilingual', 'localize', 'localise'],
  ['write', 'writing', 'compose', 'draft', 'author'],
  ['essay', 'article', 'paper', 'post', 'blog', 'story'],
  ['grammar', 'spelling', 'spell check', 'proofread', 'typo'],
  ['rewrite', 'paraphrase', 'rephrase', 'reword'],
  ['word', 'vocabulary', 'term', 'dictionary', 'synonym', 'thesaurus'],
  ['document', 'file', 'doc', 'pdf', 'report'],
  ['spreadsheet', 'sheet', 'excel', 'csv', 'table', 'workbook'],
  ['presentation', 'slide', 'slides', 'deck', 'powerpoint'],
  ['folder', 'directory', 'dir'],
  // Money and commerce
  ['price', 'cost', 'quote', 'fee', 'rate', 'charge', 'pricing', 'how much', 'cheap', 'expensive'],
  ['buy', 'purchase', 'order', 'shop', 'shopping', 'acquire', 'checkout'],
  ['sell', 'sale', 'listing', 'market'],
  ['product', 'item', 'goods', 'merchandise'],
  ['pay', 'payment', 'bill', 'invoice', 'transaction', 'checkout'],
  ['refund', 'return', 'reimburse', 'chargeback'],
  ['money', 'finance', 'financial', 'fund', 'cash', 'budget'],
  ['currency', 'exchange rate', 'forex', 'convert currency', 'fx'],
  ['stock', 'share', 'equity', 'ticker', 'market', 'invest', 'investment', 'portfolio'],
  ['crypto', 'cryptocurrency', 'bitcoin', 'ethereum', 'token', 'coin', 'blockchain'],
  ['bank', 'account', 'balance', 'banking'],
  ['tax', 'taxes', 'vat', 'irs'],
  ['loan', 'mortgage', 'credit', 'debt', 'lend', 'borrow'],
  ['insurance', 'insure', 'coverage', 'policy'],
  ['discount', 'coupon', 'deal', 'promo', 'promotion', 'voucher', 'offer', 'bargain'],
  ['salary', 'wage', 'pay', 'income', 'earnings', 'compensation'],
  ['job', 'career', 'employment', 'work', 'hire', 'hiring', 'vacancy', 'position', 'resume', 'cv'],
  ['company', 'business', 'firm', 'organization', 'organisation', 'enterprise', 'corporation'],
  ['customer', 'client', 'user', 'buyer'],
  // Health, learning, fun
  ['health', 'medical', 'medicine', 'doctor', 'symptom', 'disease', 'illness', 'clinic', 'hospital', 'wellness'],
  ['drug', 'medication', 'medicine', 'pill', 'prescription', 'pharmacy'],
  ['fitness', 'exercise', 'workout', 'gym', 'training', 'sport'],
  ['diet', 'nutrition', 'calorie', 'calories', 'food', 'meal'],
  ['sleep', 'insomnia', 'rest', 'nap'],
  ['mental', 'stress', 'anxiety', 'therapy', 'mood', 'meditation', 'mindfulness'],
  ['learn', 'study', 'education', 'course', 'lesson', 'tutorial', 'teach', 'tutor', 'school', 'class'],
  ['quiz', 'test', 'exam', 'question', 'practice', 'flashcard'],
  ['math', 'mathematics', 'calculate', 'calculator', 'compute', 'arithmetic', 'equation', 'solve'],
  ['research', 'paper', 'academic', 'scholar', 'journal', 'publication', 'citation', 'study'],
  ['book', 'novel', 'ebook', 'literature', 'author', 'reading'],
  ['game', 'play', 'gaming', 'puzzle', 'fun'],
  ['joke', 'funny', 'humor', 'humour', 'meme', 'laugh'],
  ['news', 'headline', 'headlines', 'article', 'current events', 'breaking'],
  ['horoscope', 'astrology', 'zodiac', 'tarot', 'fortune'],
  ['gift', 'present', 'gifts'],
  ['event', 'concert', 'show', 'festival', 'ticket', 'tickets'],
  ['pet', 'dog', 'cat', 'animal', 'puppy', 'kitten'],
  ['plant', 'garden', 'gardening', 'flower'],
  ['kid', 'child', 'children', 'toddler', 'baby', 'parent', 'parenting'],
  ['fashion', 'clothes', 'clothing', 'outfit', 'wear', 'apparel', 'style'],
  // Computing
  ['code', 'program', 'script', 'source', 'coding', 'programming', 'snippet', 'function'],
  ['bug', 'error', 'exception', 'crash', 'failure', 'issue', 'problem'],
  ['repository', 'repo', 'git', 'github', 'gitlab', 'commit', 'branch'],
  ['database', 'db', 'sql', 'table', 'record', 'row'],
  ['server', 'host', 'hosting', 'instance', 'machine', 'vm', 'container'],
  ['website', 'site', 'web page', 'webpage', 'url', 'link', 'domain', 'page'],
  ['browser', 'web', 'internet', 'online'],
  ['password', 'credential', 'secret', 'login', 'log in', 'sign in', 'authenticate', 'auth'],
  ['account', 'profile', 'user', 'sign up', 'signup', 'register'],
  ['permission', 'access', 'role', 'grant', 'authorize', 'authorise', 'privilege'],
  ['security', 'secure', 'vulnerability', 'malware', 'virus', 'threat', 'scan'],
  ['network', 'ip', 'dns', 'wifi', 'connection', 'ping'],
  ['log', 'logs', 'logging', 'trace', 'event'],
  ['metric', 'metrics', 'stats', 'statistics', 'analytics', 'measurement', 'kpi'],
  ['api', 'endpoint', 'webhook', 'integration', 'request'],
  ['qr', 'qr code', 'barcode'],
  ['shorten', 'short link', 'url shortener', 'shortener'],
  ['screenshot', 'screen capture', 'snapshot', 'capture'],
  ['backup', 'snapshot', 'restore', 'recover', 'recovery'],
  ['encrypt', 'encryption', 'decrypt', 'hash', 'cipher'],
  ['random', 'generate', 'generator', 'shuffle'],
  ['size', 'length', 'dimension', 'measure', 'measurement'],
  ['unit', 'convert', 'conversion', 'metric', 'imperial'],
  ['age', 'birthday', 'born', 'birth'],
  ['name', 'title', 'label', 'nickname'],
  ['tag', 'label', 'category', 'categorize', 'categorise'],
  ['group', 'team', 'channel', 'community', 'workspace'],
  ['friend', 'follower', 'connection', 'contact', 'social'],
  ['social media', 'twitter', 'facebook', 'instagram', 'linkedin', 'reddit', 'tiktok'],
  ['trend', 'trending', 'popular', 'viral', 'top'],
  ['history', 'past', 'previous', 'historical', 'archive'],
  ['future', 'predict', 'prediction', 'forecast', 'projection', 'estimate'],
];

interface Lexicon {
  /** Stemmed word → stemmed related words of every group it is in. */
  single: Map<string, readonly string[]>;
  /** First stem of a phrase → [the phrase's stems, its related words]. */
  phrases: Map<string, [readonly string[], readonly string[]][]>;
}
let built: Lexicon | undefined;

function lexicon(): Lexicon {
  if (built) return built;
  const table = new Map<string, Set<string>>();
  for (const group of groups) {
    const keys = group.map((entry) => terms(entry).join(' ')).filter(Boolean);
    // Only single words are expansion targets; phrases ("look up") only trigger.
    const members = keys.filter((key) => !key.includes(' ') && !functionWords.has(key));
    for (const key of keys) {
      const set = table.get(key) ?? new Set<string>();
      for (const member of members) if (member !== key) set.add(member);
      table.set(key, set);
    }
  }
  built = { single: new Map(), phrases: new Map() };
  for (const [key, set] of table) {
    const words = key.split(' ');
    if (words.length === 1) built.single.set(key, [...set]);
    else {
      const list = built.phrases.get(words[0]!) ?? [];
      list.push([words, [...set]]);
      built.phrases.set(words[0]!, list);
    }
  }
  return built;
}

/**
 * Related terms of a query: for each word or phrase the lexicon knows, the stems of its
 * near-synonyms. `isContent(i)` says whether word i may be expanded on its own (function
 * words are not; a phrase may contain them, as "look up" does). The caller drops terms the
 * query already contains.
 */
export function relatedTerms(queryStems: readonly string[], isContent: (index: number) => boolean): Set<string> {
  const { single, phrases } = lexicon();
  const out = new Set<string>();
  for (let i = 0; i < queryStems.length; i++) {
    const word = queryStems[i]!;
    if (isContent(i)) {
      const hits = single.get(word);
      if (hits) for (const term of hits) out.add(term);
    }
    const candidates = phrases.get(word);
    if (!candidates) continue;
    for (const [words, hits] of candidates) {
      if (i + words.length > queryStems.length) continue;
      let match = true;
      for (let j = 1; j < words.length && match; j++) match = queryStems[i + j] === words[j];
      if (match) for (const term of hits) out.add(term);
    }
  }
  return out;
}

/** The lexicon's groups as written, for the stem-collision checks of concepts.test.ts. */
export const conceptGroups: readonly (readonly string[])[] = groups;
