/**
 * The statements behind `PostgresStore`, for the schema whose quoted name is
 * `s`. Each is one statement, so each is atomic on its own; times come from
 * `clock_timestamp()` (the server's clock at that moment, not the start of an
 * enclosing transaction), so a completion that runs late inside a long
 * transaction still sees the lease as it is now.
 */
/**
 * The row format this store writes and reads (`idempotency_records.format`).
 * A row of another format is never read, taken over, completed, released,
 * renewed or swept: the claim and the wait report its format, and the store
 * refuses it (`RecordVersionError`).
 */
export const RECORD_FORMAT = 1;

export function statements(s: string) {
  const records = `${s}.idempotency_records`;
  const ours = `format = ${RECORD_FORMAT}`;
  const held = `store_key = $1 AND owner = $2 AND status = 'in_progress' AND expires_at > clock_timestamp() AND ${ours}`;
  /** The live record `owner` completed: the same completion, or a late renewal, arriving again. */
  const completedBy = `store_key = $1 AND owner = $2 AND status = 'completed' AND expires_at > clock_timestamp() AND ${ours}`;
  return {
    /**
     * Insert the record, or take over a row whose lease, release or
     * retention has ended; otherwise report the live row. Of any number of
     * concurrent claims exactly one inserts or takes over: the primary key
     * makes the others wait for it and then re-check the takeover condition
     * against the row it left (ON CONFLICT DO UPDATE ... WHERE).
     *
     * Epoch: `greatest(previous + 1, clock ms)`. The previous epoch is in the
     * row, which outlives the record (see `migrations.ts`), so epochs grow
     * across release and expiry; once the sweep removed the row, the clock
     * has long passed every epoch it held.
     *
     * The report half reads the statement's snapshot, which may predate a
     * row a concurrent claim just committed: it then returns no row, or one
     * that looks expired, and the store runs the statement again. A live
     * row in progress under the same owner (this claim arriving twice) is
     * reported `claimed` with its epoch. A row of another format is never
     * taken over: it is reported, with its format, for the store to refuse.
     *
     * $1 store key, $2 fingerprint, $3 owner, $4 lease ms, $5 heartbeat ms (NULL: not given).
     */
    claim: `
      WITH claimed AS (
        INSERT INTO ${records} AS r (store_key, status, fingerprint, owner, epoch, result, expires_at, format, renewed_at, heartbeat_ms)
        SELECT $1, 'in_progress', $2, $3, floor(extract(epoch FROM now.t) * 1000)::bigint, NULL, now.t + $4 * interval '1 millisecond',
               ${RECORD_FORMAT}, now.t, $5::integer
          FROM (SELECT clock_timestamp() AS t) AS now
        ON CONFLICT (store_key) DO UPDATE
          SET status = 'in_progress', fingerprint = excluded.fingerprint, owner = excluded.owner,
              epoch = greatest(r.epoch + 1, excluded.epoch), result = NULL, expires_at = excluded.expires_at,
              renewed_at = excluded.renewed_at, heartbeat_ms = excluded.heartbeat_ms
          WHERE r.expires_at <= clock_timestamp() AND r.${ours}
        RETURNING r.epoch
      )
      SELECT 'claimed' AS status, epoch::text AS epoch, NULL AS fingerprint, NULL AS result, NULL::float8 AS remaining_ms,
             ${RECORD_FORMAT}::smallint AS format
        FROM claimed
      UNION ALL
      SELECT CASE WHEN mine THEN 'claimed' ELSE r.status END, CASE WHEN mine THEN r.epoch::text END,
             r.fingerprint, r.result, extract(epoch FROM r.expires_at - clock_timestamp()) * 1000, r.format
        FROM ${records} r,
             LATERAL (SELECT r.status = 'in_progress' AND r.owner = $3 AND r.expires_at > clock_timestamp() AND r.${ours} AS mine) AS own
       WHERE r.store_key = $1 AND NOT EXISTS (SELECT 1 FROM claimed)`,

    /**
     * Store the result if `owner` still holds a live lease, then notify the
     * waiters (delivered when the surrounding transaction commits). One row
     * when stored, by this statement or an earlier one of the same owner
     * (that first result stays, nobody is notified again).
     * $1 store key, $2 owner, $3 result, $4 retention ms, $5 channel.
     */
    complete: `
      WITH done AS (
        UPDATE ${records}
           SET status = 'completed', result = $3, expires_at = clock_timestamp() + $4 * interval '1 millisecond'
         WHERE ${held}
        RETURNING store_key
      )
      SELECT pg_notify($5, store_key)::text FROM done
      UNION ALL
      SELECT NULL FROM ${records} WHERE ${completedBy} AND NOT EXISTS (SELECT 1 FROM done)`,

    /**
     * End the record if `owner` still holds it: the row stays as the fence,
     * already expired, so the next claim takes it over. One row when
     * released, by this statement or an earlier one of the same owner that
     * no claim has taken over since. $1 key, $2 owner, $3 channel.
     */
    release: `
      WITH gone AS (
        UPDATE ${records} SET status = 'released', result = NULL, expires_at = clock_timestamp()
         WHERE ${held}
        RETURNING store_key
      )
      SELECT pg_notify($3, store_key)::text FROM gone
      UNION ALL
      SELECT NULL FROM ${records} WHERE store_key = $1 AND owner = $2 AND status = 'released' AND NOT EXISTS (SELECT 1 FROM gone)`,

    /**
     * Extend a live lease, and note when; a record its owner completed is
     * left as it is, and counts as renewed. $1 key, $2 owner, $3 lease ms.
     */
    renew: `UPDATE ${records} SET expires_at = CASE WHEN status = 'in_progress' THEN clock_timestamp() + $3 * interval '1 millisecond' ELSE expires_at END,
           renewed_at = CASE WHEN status = 'in_progress' THEN clock_timestamp() ELSE renewed_at END
       WHERE (${held}) OR (${completedBy})`,

    /**
     * Whether a waiter on $1 should keep waiting: a row when it should, or
     * when the row is of another format (its `format` says which).
     */
    inProgress: `SELECT format FROM ${records}
       WHERE store_key = $1 AND (NOT ${ours} OR (status = 'in_progress' AND expires_at > clock_timestamp()))`,

    /** Delete up to $2 rows that ended more than $1 ms ago. */
    sweep: `
      DELETE FROM ${records} WHERE store_key IN (
        SELECT store_key FROM ${records}
         WHERE expires_at < clock_timestamp() - $1 * interval '1 millisecond' AND ${ours}
         LIMIT $2
      )`,
  };
}

export type Statements = ReturnType<typeof statements>;

/**
 * The operator's statements (`InspectableStore`), for the schema whose
 * quoted name is `s`: a live record read as it is, and the steps of the
 * transaction that ends a record whoever holds it. A row of another format
 * is selected whatever its state (its `format` says which), for the store
 * to refuse: never read as a record, never ended.
 */
export function operatorStatements(s: string) {
  const records = `${s}.idempotency_records`;
  const ours = `format = ${RECORD_FORMAT}`;
  const found = `store_key = $1 AND (NOT ${ours} OR (status <> 'released' AND expires_at > clock_timestamp()))`;
  /**
   * Whether the row's `renewed_at` and `heartbeat_ms` are its current
   * holder's: this release's claim writes both with the claim's time, from
   * which the epoch is taken (ms of the server's clock, or one past the
   * previous epoch, later still), and its renewals only move `renewed_at`
   * on. A release before migration 3 still runs against this schema during
   * a rolling deploy or a rollback: its claim takes a row over and its
   * renewals extend it without writing either column, so the row keeps the
   * previous holder's, older than the epoch. Read as theirs, a live holder
   * would look silent and be released without force: its retry runs the
   * side effect again. Such a row's holder is one the store cannot tell.
   */
  const current = `renewed_at IS NOT NULL AND floor(extract(epoch FROM renewed_at) * 1000) >= epoch`;
  /** An in-progress record's holder: ms since its last renewal, and its heartbeat; NULL when the row does not keep them for it. */
  const holder = `CASE WHEN status = 'in_progress' AND ${current} THEN extract(epoch FROM clock_timestamp() - renewed_at) * 1000 END AS renewal_ms_ago,
             CASE WHEN status = 'in_progress' AND ${current} THEN heartbeat_ms END AS heartbeat_ms`;
  return {
    /** The live record at $1; a released or ended row is the fence, not a record. */
    inspect: `
      SELECT status, fingerprint, owner <> '' AS owner_present, epoch::text AS epoch, result,
             extract(epoch FROM expires_at - clock_timestamp()) * 1000 AS remaining_ms, format, ${holder}
        FROM ${records} WHERE ${found}`,

    /**
     * Lock the live record at $1 (waiting for a transactional completion
     * that holds it to commit or roll back), inside the release's
     * transaction: a renewal then waits for the release, so whether the
     * holder is alive is decided on the row as it stays.
     */
    lock: `SELECT status, epoch::text AS epoch, format, ${holder} FROM ${records} WHERE ${found} FOR UPDATE`,

    /**
     * End the locked record: the row stays as the fence, released, already
     * expired, with an epoch one past the holder's that nobody holds, and
     * no owner, so the holder fails every owner check and the next claim's
     * epoch exceeds the new one. Then notify the waiters (on COMMIT).
     * $1 key, $2 channel.
     */
    end: `
      WITH ended AS (
        UPDATE ${records} SET status = 'released', owner = '', result = NULL, epoch = epoch + 1, expires_at = clock_timestamp()
         WHERE store_key = $1 AND ${ours}
        RETURNING epoch
      )
      SELECT epoch::text AS epoch, pg_notify($2, $1)::text AS notified FROM ended`,
  };
}

export type OperatorStatements = ReturnType<typeof operatorStatements>;
