/**
 * The contract a store of your own implements
 * (`@idempotency-chain/idempotency/store`): every method the coordinator
 * calls, what each answers, and the optional transactional and operator
 * parts. Run `./testing`'s conformance suite against it; throw the errors
 * of `./errors` (`RecordVersionError`, `SchemaVersionError`,
 * `StoreRefusedError`) where the contract says so.
 */
export { RecordStatus } from '../store';
export type {
  ClaimRequest,
  ClaimResult,
  IdempotencyStore,
  InspectableStore,
  OperatorReleaseResult,
  StoreDegraded,
  StoredRecord,
  StoreTransaction,
  TransactionalStore,
} from '../store';
