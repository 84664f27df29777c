import { IsInt, IsString, Length, Max, Min } from 'class-validator';

/**
 * The body that travels the whole chain: what the user pays for. Every hop
 * validates it before anything is claimed or charged.
 */
export class OrderPaymentDto {
  @IsString()
  @Length(1, 64)
  orderId!: string;

  @IsString()
  @Length(1, 64)
  account!: string;

  @IsInt()
  @Min(1)
  @Max(100_000_000)
  amountCents!: number;
}

/** The answer of every hop: the order, paid by exactly one charge. */
export interface PaidOrder {
  orderId: string;
  chargeId: string;
  amountCents: number;
  status: string;
}
