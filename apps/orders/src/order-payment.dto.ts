import { IsInt, IsString, Length, Max, Min } from 'class-validator';

/**
 * What the gateway asks orders for, and what orders asks payments to
 * charge: validated before anything is claimed or charged.
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

/** What orders answers once the order is charged (`OrdersModule`). */
export interface PaidOrder {
  orderId: string;
  chargeId: string;
  amountCents: number;
  status: 'paid';
}
