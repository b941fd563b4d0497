-- Written by `npm run sql:update` (test/sql/snapshots.ts); test/sql/snapshots.test.ts fails when the code sends other SQL.

-- ConversionRepository.entriesByIds(1, [101,102,103]), a page sends up to 100 ids
select "id", "entry_json"
from "conversions"
where "account_id" = $1 and "id" in ($2, $3, $4)
order by "id";

-- ConversionRepository.ndjsonByIds(1, [101,102,103]), an export sends up to 2,000 ids
select coalesce(string_agg(line, ''), '') as "lines"
from (select '{"id":' || id || ',' || substr(entry_json, 2) || $1 as "line" from "conversions" where "account_id" = $2 and "id" in ($3, $4, $5) order by "id") as "lines";

-- ConversionRepository.bumpVersion(1)
insert into "conversion_versions" ("account_id", "version")
values ($1, $2)
on conflict ("account_id") do update
set "version" = "conversion_versions"."version" + $3;

-- ConversionRepository.insertNew(1, two conversions), an import sends its rows in batches
insert into "conversions" ("account_id", "created_at", "cart_integration", "receipt", "original_receipt", "amount", "tax_amount", "shipping_amount", "products", "email", "user_id", "page_id", "page_version", "upsell_flow_id", "upsell_session", "upsell_path", "upsell_group", "upsell_step", "country", "mobile", "affiliate", "vendor", "role", "tracking_codes", "referrer", "referrer_name", "referrer_medium", "joint_venture_order", "currency", "hostname", "utm_source", "utm_medium", "utm_campaign", "utm_content", "first_name", "last_name", "zip_code", "payment_method", "affiliate_payouts", "entry_json")
values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33, $34, $35, $36, $37, $38, $39, $40),
       ($41, $42, $43, $44, $45, $46, $47, $48, $49, $50, $51, $52, $53, $54, $55, $56, $57, $58, $59, $60, $61, $62, $63, $64, $65, $66, $67, $68, $69, $70, $71, $72, $73, $74, $75, $76, $77, $78, $79, $80)
on conflict ("account_id", "cart_integration", "receipt") do nothing;

-- ConversionRepository.insertEach(two conversions of account 1), new receipts
insert into "conversions" ("created_at", "cart_integration", "receipt", "original_receipt", "amount", "tax_amount", "shipping_amount", "products", "email", "user_id", "page_id", "page_version", "upsell_flow_id", "upsell_session", "upsell_path", "upsell_group", "upsell_step", "country", "mobile", "affiliate", "vendor", "role", "tracking_codes", "referrer", "referrer_name", "referrer_medium", "joint_venture_order", "currency", "hostname", "utm_source", "utm_medium", "utm_campaign", "utm_content", "first_name", "last_name", "zip_code", "payment_method", "affiliate_payouts", "entry_json", "account_id")
values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33, $34, $35, $36, $37, $38, $39, $40),
       ($41, $42, $43, $44, $45, $46, $47, $48, $49, $50, $51, $52, $53, $54, $55, $56, $57, $58, $59, $60, $61, $62, $63, $64, $65, $66, $67, $68, $69, $70, $71, $72, $73, $74, $75, $76, $77, $78, $79, $80)
on conflict ("account_id", "cart_integration", "receipt") do nothing
returning "id", "account_id", "cart_integration", "receipt";

-- ConversionRepository.insertEach(two conversions of account 1), the second receipt there already [1 of 2]
insert into "conversions" ("created_at", "cart_integration", "receipt", "original_receipt", "amount", "tax_amount", "shipping_amount", "products", "email", "user_id", "page_id", "page_version", "upsell_flow_id", "upsell_session", "upsell_path", "upsell_group", "upsell_step", "country", "mobile", "affiliate", "vendor", "role", "tracking_codes", "referrer", "referrer_name", "referrer_medium", "joint_venture_order", "currency", "hostname", "utm_source", "utm_medium", "utm_campaign", "utm_content", "first_name", "last_name", "zip_code", "payment_method", "affiliate_payouts", "entry_json", "account_id")
values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33, $34, $35, $36, $37, $38, $39, $40),
       ($41, $42, $43, $44, $45, $46, $47, $48, $49, $50, $51, $52, $53, $54, $55, $56, $57, $58, $59, $60, $61, $62, $63, $64, $65, $66, $67, $68, $69, $70, $71, $72, $73, $74, $75, $76, $77, $78, $79, $80)
on conflict ("account_id", "cart_integration", "receipt") do nothing
returning "id", "account_id", "cart_integration", "receipt";

-- ConversionRepository.insertEach(two conversions of account 1), the second receipt there already [2 of 2]
select "id", "account_id", "cart_integration", "receipt"
from "conversions"
where ("account_id", "cart_integration", "receipt") in (($1, $2, $3));
