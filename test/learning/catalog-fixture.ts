/**
 * @module test/learning/catalog-fixture
 * A small catalog for the learned-example tests (issue #13) and the request that misses its
 * tool at first: "how many yen will my dollars buy" names none of the words of
 * `convert_currency` ("convert an amount between currencies at the exchange rate").
 */

/** The tools: name and description. */
export const LEARNING_TOOLS: ReadonlyArray<{ name: string; description: string }> = [
  { name: 'convert_currency', description: 'Convert an amount of money between two currencies at the current exchange rate.' },
  { name: 'weather_forecast', description: 'Weather forecast for a city: temperature, rain and wind for the coming days.' },
  { name: 'stock_quote', description: 'Latest stock market price quote for a ticker symbol.' },
  { name: 'send_email', description: 'Send an email message to a recipient with a subject and body.' },
  { name: 'book_flight', description: 'Book a flight ticket between two airports on a date.' },
  { name: 'translate_text', description: 'Translate text from one language to another language.' },
  { name: 'create_event', description: 'Create a calendar event with a title, start time and attendees.' },
  { name: 'search_files', description: 'Search files in the drive by name or content.' },
  { name: 'bank_balance', description: 'Show the balance of a bank account in its currency.' },
  { name: 'tip_calculator', description: 'Calculate a restaurant tip and split the bill.' },
];

/** The request phrased in other words: misses convert_currency at first (no word in common). */
export const PARAPHRASE = 'how many yen will my dollars buy';
/**
 * The same need with a word of another tool: bank_balance first by far (1.3 vs 0.13 with the
 * offline embedder), convert_currency offered lower, so a gateway session can call it.
 */
export const BANK_PARAPHRASE = 'how many yen will my dollars buy at the bank';
/** A request whose best tool is clear (weather_forecast). */
export const CLEAR_REQUEST = 'what is the weather forecast in Paris tomorrow';
