/**
 * @module retrieval/embedders/token-table-file
 * The file that holds a distilled token table (`token-table.ts`): the vocabulary of the model
 * it came from and one int8 vector per vocabulary piece with a float32 scale per row.
 *
 * Layout (little-endian): "QTT1", uint32 header length, the UTF-8 JSON header (zero-padded to
 * a multiple of 4), float32 scales[vocabSize], int8 rows[vocabSize × dimensions]. A row is
 * `round(vector / scale)` with `scale = max |component| / 127`, so the error of a component
 * is at most half a step (≤ 0.4 % of the row's largest component).
 */
import { createHash } from 'node:crypto';
import { QuiverError } from '../../core/errors.ts';
import type { Vocabulary } from './sentencepiece.ts';

const magic = 'QTT1';

/** What the header says about the table and where it came from. */
export interface TokenTableHeader {
  format: 1;
  /** The model the rows were computed with (package, version, SHA-256 of its files). */
  source: { package: string; version: string; modelSha256: string; vocabSha256: string };
  /** The licence of the source weights, which the table inherits. */
  license: string;
  /** Principal components removed from the rows at distillation. */
  removedComponents: number;
  vocabSize: number;
  dimensions: number;
  vocabulary: Vocabulary;
}

/** A table in memory: the header and its rows. */
export interface TokenTable {
  header: TokenTableHeader;
  scales: Float32Array;
  rows: Int8Array;
  /** SHA-256 of the whole file (part of the embedder's model id). */
  sha256: string;
}

/** Quantises float rows (vocabSize × dimensions) and writes the file's bytes. */
export function encodeTokenTable(header: Omit<TokenTableHeader, 'format' | 'vocabSize'>, vectors: Float32Array): Buffer {
  const vocabSize = header.vocabulary.length;
  const { dimensions } = header;
  if (vectors.length !== vocabSize * dimensions) throw new QuiverError('invalid_input', `token table: ${vectors.length} values for ${vocabSize} × ${dimensions}`);
  const json = Buffer.from(JSON.stringify({ format: 1, vocabSize, ...header }), 'utf8');
  const headerBytes = Buffer.alloc(Math.ceil(json.length / 4) * 4);
  json.copy(headerBytes);
  const scales = new Float32Array(vocabSize);
  const rows = new Int8Array(vocabSize * dimensions);
  for (let row = 0; row < vocabSize; row++) {
    let largest = 0;
    for (let i = 0; i < dimensions; i++) largest = Math.max(largest, Math.abs(vectors[row * dimensions + i]!));
    const scale = largest > 0 ? largest / 127 : 1;
    scales[row] = scale;
    for (let i = 0; i < dimensions; i++) rows[row * dimensions + i] = Math.round(vectors[row * dimensions + i]! / scale);
  }
  const prefix = Buffer.alloc(8);
  prefix.write(magic, 0, 'ascii');
  prefix.writeUInt32LE(headerBytes.length, 4);
  return Buffer.concat([prefix, headerBytes, Buffer.from(scales.buffer), Buffer.from(rows.buffer)]);
}

/** Reads a table file's bytes; a damaged or foreign file is a clear error. */
export function decodeTokenTable(bytes: Buffer): TokenTable {
  const broken = (why: string): QuiverError => new QuiverError('embedder_unavailable', `token table is unreadable: ${why}`, { kind: 'operational' });
  if (bytes.length < 8 || bytes.toString('ascii', 0, 4) !== magic) throw broken('not a QTT1 file');
  const headerLength = bytes.readUInt32LE(4);
  if (8 + headerLength > bytes.length) throw broken('header runs past the end');
  let header: TokenTableHeader;
  try {
    header = JSON.parse(bytes.toString('utf8', 8, 8 + headerLength).replace(/\0+$/, '')) as TokenTableHeader;
  } catch (error) {
    throw broken(`header is not JSON (${(error as Error).message})`);
  }
  const { vocabSize, dimensions } = header;
  if (header.format !== 1 || !Number.isInteger(vocabSize) || !Number.isInteger(dimensions) || vocabSize < 1 || dimensions < 1 || header.vocabulary?.length !== vocabSize) {
    throw broken('header does not describe a format-1 table');
  }
  const scalesAt = 8 + headerLength;
  const rowsAt = scalesAt + vocabSize * 4;
  if (bytes.length !== rowsAt + vocabSize * dimensions) throw broken(`expected ${rowsAt + vocabSize * dimensions} bytes, found ${bytes.length}`);
  // Copies, so the views are aligned whatever the Buffer's offset in its pool.
  const scales = new Float32Array(bytes.buffer.slice(bytes.byteOffset + scalesAt, bytes.byteOffset + rowsAt));
  const rows = new Int8Array(bytes.buffer.slice(bytes.byteOffset + rowsAt, bytes.byteOffset + bytes.length));
  return { header, scales, rows, sha256: createHash('sha256').update(bytes).digest('hex') };
}
