import { IsInt, IsString, Length, Max, Min } from 'class-validator';

/**
 * What orders asks payments to charge, over HTTP or in a message's body:
 * validated before anything is claimed or charged.
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

/** What payments answers once it charged an order. */
export interface CapturedCharge {
  orderId: string;
  chargeId: string;
  amountCents: number;
  status: 'captured';
}
