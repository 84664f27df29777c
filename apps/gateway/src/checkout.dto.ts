import { IsInt, IsOptional, IsString, Length, Max, Min } from 'class-validator';

/**
 * What a customer sends to check out: the order and its amount. The account
 * charged is the caller's own (its credentials name it); a body may still
 * name it, and naming another is refused (`AccountGuard`).
 */
export class CheckoutDto {
  @IsString()
  @Length(1, 64)
  orderId!: string;

  @IsOptional()
  @IsString()
  @Length(1, 64)
  account?: string;

  @IsInt()
  @Min(1)
  @Max(100_000_000)
  amountCents!: number;
}
