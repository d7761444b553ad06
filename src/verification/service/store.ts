/**
 * @module verification/service/store
 * The rows of verification: each signed report as issued (verbatim jsonb, with the columns lists
 * read), and the verified score and level written to the plugin, in one transaction, only while
 * the plugin still has the version that was verified (an update in between wins).
 */
import type { Database, Queryable } from '../../store/database.ts';
import type { VerificationReport } from '../report.ts';

/** A stored report with its row facts. */
export interface StoredReport {
  id: string;
  pluginId: string;
  version: string;
  score: number;
  grade: string;
  trustLevel: string;
  createdAt: Date;
  report: VerificationReport;
}

interface ReportRow {
  id: string;
  plugin_id: string;
  version: string;
  score: number;
  grade: string;
  trust_level: string;
  created_at: Date;
  report: VerificationReport;
}

const COLUMNS = 'id, plugin_id, version, score, grade, trust_level, created_at, report';

function toStored(row: ReportRow): StoredReport {
  return {
    id: row.id,
    pluginId: row.plugin_id,
    version: row.version,
    score: Number(row.score),
    grade: row.grade,
    trustLevel: row.trust_level,
    createdAt: new Date(row.created_at),
    report: row.report,
  };
}

/** Stores a signed report; writes the plugin's trust columns when it still has that version. Returns whether it did. */
export async function storeReport(db: Database, report: VerificationReport, keyId: string, options: { writeTrust?: boolean } = {}): Promise<{ trustWritten: boolean }> {
  return db.transaction(async (tx: Queryable) => {
    await tx.query(
      `INSERT INTO verification_reports (job_id, plugin_id, version, score, grade, trust_level, report, signature, key_id, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10)`,
      [report.jobId, report.pluginUuid, report.version, report.overallScore, report.grade, report.recommendation.trustLevel, JSON.stringify(report), report.signature, keyId, report.createdAt],
    );
    // A staged version (issue #11) may carry the installed version's label: never its trust.
    if (options.writeTrust === false) return { trustWritten: false };
    const updated = await tx.query(
      `UPDATE plugins SET trust_score = $2, trust_level = $3, updated_at = now()
       WHERE id = $1 AND COALESCE(version, 'local') = $4 AND status <> 'removed'`,
      [report.pluginUuid, report.overallScore, report.recommendation.trustLevel, report.version],
    );
    return { trustWritten: updated.affectedRows > 0 };
  });
}

/** Reports of a plugin, newest first. */
export async function listReports(db: Queryable, pluginId: string, limit: number): Promise<StoredReport[]> {
  const result = await db.query<ReportRow>(
    `SELECT ${COLUMNS} FROM verification_reports WHERE plugin_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`,
    [pluginId, limit],
  );
  return result.rows.map(toStored);
}
