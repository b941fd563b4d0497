-- Written by `npm run sql:update` (test/sql/snapshots.ts); test/sql/snapshots.test.ts fails when the code sends other SQL.

-- layoutStatements("conversions", the filterable columns, ["email"])
DROP TABLE IF EXISTS conversions;
CREATE TABLE conversions (id BIGINT NOT NULL, account_id BIGINT NOT NULL, created_at BIGINT, cart_integration VARCHAR, receipt VARCHAR, original_receipt VARCHAR, amount DOUBLE, tax_amount DOUBLE, shipping_amount DOUBLE, user_id VARCHAR, page_id BIGINT, page_version VARCHAR, upsell_path VARCHAR, upsell_step DOUBLE, country VARCHAR, mobile TINYINT, affiliate VARCHAR, vendor VARCHAR, referrer_name VARCHAR, referrer_medium VARCHAR, joint_venture_order VARCHAR, currency VARCHAR, hostname VARCHAR, utm_source VARCHAR, utm_medium VARCHAR, utm_campaign VARCHAR, utm_content VARCHAR, first_name VARCHAR, last_name VARCHAR, zip_code VARCHAR, payment_method VARCHAR, amount_rank BIGINT, tax_amount_rank BIGINT, shipping_amount_rank BIGINT, upsell_step_rank BIGINT, email_hash UBIGINT);
DROP TABLE IF EXISTS conversion_tracking_codes;
CREATE TABLE conversion_tracking_codes (conversion_id BIGINT NOT NULL, account_id BIGINT NOT NULL, code VARCHAR NOT NULL);

-- incomingTableStatements(the filterable columns, ["email"], {"rowColumns":["created_at"],"document":"entry_json"})
CREATE OR REPLACE TEMP TABLE incoming (id BIGINT NOT NULL, account_id BIGINT NOT NULL, created_at BIGINT, document VARCHAR NOT NULL);
CREATE OR REPLACE TEMP TABLE parsed AS
SELECT id, account_id, created_at, json_transform(document, '{"cart_integration":"VARCHAR","receipt":"VARCHAR","original_receipt":"VARCHAR","amount":"DOUBLE","tax_amount":"DOUBLE","shipping_amount":"DOUBLE","user_id":"VARCHAR","page_id":"BIGINT","page_version":"VARCHAR","upsell_path":"VARCHAR","upsell_step":"DOUBLE","country":"VARCHAR","mobile":"BOOLEAN","affiliate":"VARCHAR","vendor":"VARCHAR","tracking_codes":["VARCHAR"],"referrer_name":"VARCHAR","referrer_medium":"VARCHAR","joint_venture_order":"VARCHAR","currency":"VARCHAR","hostname":"VARCHAR","utm_source":"VARCHAR","utm_medium":"VARCHAR","utm_campaign":"VARCHAR","utm_content":"VARCHAR","first_name":"VARCHAR","last_name":"VARCHAR","zip_code":"VARCHAR","payment_method":"VARCHAR","email":"VARCHAR"}') AS d
FROM incoming
LIMIT 0;

-- indexingStatements("conversions", the filterable columns, ["email"], {"rowColumns":["created_at"],"document":"entry_json"})
INSERT INTO parsed
SELECT id, account_id, created_at, json_transform(document, '{"cart_integration":"VARCHAR","receipt":"VARCHAR","original_receipt":"VARCHAR","amount":"DOUBLE","tax_amount":"DOUBLE","shipping_amount":"DOUBLE","user_id":"VARCHAR","page_id":"BIGINT","page_version":"VARCHAR","upsell_path":"VARCHAR","upsell_step":"DOUBLE","country":"VARCHAR","mobile":"BOOLEAN","affiliate":"VARCHAR","vendor":"VARCHAR","tracking_codes":["VARCHAR"],"referrer_name":"VARCHAR","referrer_medium":"VARCHAR","joint_venture_order":"VARCHAR","currency":"VARCHAR","hostname":"VARCHAR","utm_source":"VARCHAR","utm_medium":"VARCHAR","utm_campaign":"VARCHAR","utm_content":"VARCHAR","first_name":"VARCHAR","last_name":"VARCHAR","zip_code":"VARCHAR","payment_method":"VARCHAR","email":"VARCHAR"}') AS d
FROM incoming;
INSERT INTO conversions (id, account_id, created_at, cart_integration, receipt, original_receipt, amount, tax_amount, shipping_amount, user_id, page_id, page_version, upsell_path, upsell_step, country, mobile, affiliate, vendor, referrer_name, referrer_medium, joint_venture_order, currency, hostname, utm_source, utm_medium, utm_campaign, utm_content, first_name, last_name, zip_code, payment_method, amount_rank, tax_amount_rank, shipping_amount_rank, upsell_step_rank, email_hash)
SELECT id, account_id, created_at, d.cart_integration, d.receipt, d.original_receipt, d.amount, d.tax_amount, d.shipping_amount, d.user_id, d.page_id, d.page_version, d.upsell_path, d.upsell_step, d.country, d.mobile::TINYINT, d.affiliate, d.vendor, d.referrer_name, d.referrer_medium, d.joint_venture_order, d.currency, d.hostname, d.utm_source, d.utm_medium, d.utm_campaign, d.utm_content, d.first_name, d.last_name, d.zip_code, d.payment_method, CASE WHEN d.amount >= 10000000000000 THEN 2000000000000001 WHEN d.amount <= -10000000000000 THEN -2000000000000001 ELSE (2 * (CASE WHEN (floor(d.amount * 100) + 1) / 100 <= d.amount THEN floor(d.amount * 100) + 1 WHEN floor(d.amount * 100) / 100 > d.amount THEN floor(d.amount * 100) - 1 ELSE floor(d.amount * 100) END) + CASE WHEN (CASE WHEN (floor(d.amount * 100) + 1) / 100 <= d.amount THEN floor(d.amount * 100) + 1 WHEN floor(d.amount * 100) / 100 > d.amount THEN floor(d.amount * 100) - 1 ELSE floor(d.amount * 100) END) / 100 = d.amount THEN 0 ELSE 1 END)::BIGINT END, CASE WHEN d.tax_amount >= 10000000000000 THEN 2000000000000001 WHEN d.tax_amount <= -10000000000000 THEN -2000000000000001 ELSE (2 * (CASE WHEN (floor(d.tax_amount * 100) + 1) / 100 <= d.tax_amount THEN floor(d.tax_amount * 100) + 1 WHEN floor(d.tax_amount * 100) / 100 > d.tax_amount THEN floor(d.tax_amount * 100) - 1 ELSE floor(d.tax_amount * 100) END) + CASE WHEN (CASE WHEN (floor(d.tax_amount * 100) + 1) / 100 <= d.tax_amount THEN floor(d.tax_amount * 100) + 1 WHEN floor(d.tax_amount * 100) / 100 > d.tax_amount THEN floor(d.tax_amount * 100) - 1 ELSE floor(d.tax_amount * 100) END) / 100 = d.tax_amount THEN 0 ELSE 1 END)::BIGINT END, CASE WHEN d.shipping_amount >= 10000000000000 THEN 2000000000000001 WHEN d.shipping_amount <= -10000000000000 THEN -2000000000000001 ELSE (2 * (CASE WHEN (floor(d.shipping_amount * 100) + 1) / 100 <= d.shipping_amount THEN floor(d.shipping_amount * 100) + 1 WHEN floor(d.shipping_amount * 100) / 100 > d.shipping_amount THEN floor(d.shipping_amount * 100) - 1 ELSE floor(d.shipping_amount * 100) END) + CASE WHEN (CASE WHEN (floor(d.shipping_amount * 100) + 1) / 100 <= d.shipping_amount THEN floor(d.shipping_amount * 100) + 1 WHEN floor(d.shipping_amount * 100) / 100 > d.shipping_amount THEN floor(d.shipping_amount * 100) - 1 ELSE floor(d.shipping_amount * 100) END) / 100 = d.shipping_amount THEN 0 ELSE 1 END)::BIGINT END, CASE WHEN d.upsell_step >= 10000000000000 THEN 2000000000000001 WHEN d.upsell_step <= -10000000000000 THEN -2000000000000001 ELSE (2 * (CASE WHEN (floor(d.upsell_step * 100) + 1) / 100 <= d.upsell_step THEN floor(d.upsell_step * 100) + 1 WHEN floor(d.upsell_step * 100) / 100 > d.upsell_step THEN floor(d.upsell_step * 100) - 1 ELSE floor(d.upsell_step * 100) END) + CASE WHEN (CASE WHEN (floor(d.upsell_step * 100) + 1) / 100 <= d.upsell_step THEN floor(d.upsell_step * 100) + 1 WHEN floor(d.upsell_step * 100) / 100 > d.upsell_step THEN floor(d.upsell_step * 100) - 1 ELSE floor(d.upsell_step * 100) END) / 100 = d.upsell_step THEN 0 ELSE 1 END)::BIGINT END, ('0x' || left(sha256(d.email), 16))::UBIGINT
FROM parsed;
INSERT INTO conversion_tracking_codes (conversion_id, account_id, code)
SELECT id, account_id, unnest(list_distinct(d.tracking_codes))
FROM parsed;
DELETE FROM parsed;
DELETE FROM incoming;

-- countAndPagesQuery("conversions", 1, "created_at.between=2026-01-01,2026-01-31&utm_source=facebook", upTo, 1)
SELECT count(*), min(id, 100)
FROM conversions
WHERE id <= $2::BIGINT AND account_id = $1::BIGINT AND created_at BETWEEN $3::BIGINT AND $4::BIGINT AND utm_source = $5::VARCHAR;

-- pageQuery("conversions", 1, "created_at.between=2026-01-01,2026-01-31&utm_source=facebook", upTo, 12, undefined)
SELECT id
FROM conversions
WHERE id <= $2::BIGINT AND account_id = $1::BIGINT AND created_at BETWEEN $3::BIGINT AND $4::BIGINT AND utm_source = $5::VARCHAR
ORDER BY id
LIMIT 100
OFFSET 1100;

-- pageQuery("conversions", 1, "created_at.between=2026-01-01,2026-01-31&utm_source=facebook", upTo, 12, 41017)
SELECT id
FROM conversions
WHERE id <= $2::BIGINT AND id > $3::BIGINT AND account_id = $1::BIGINT AND created_at BETWEEN $4::BIGINT AND $5::BIGINT AND utm_source = $6::VARCHAR
ORDER BY id
LIMIT 100;

-- countAndPagesQuery("conversions", 1, "cart_integration.in=clickbank,buygoods&amount.gte=30", upTo, 1)
SELECT count(*), min(id, 100)
FROM conversions
WHERE id <= $2::BIGINT AND account_id = $1::BIGINT AND list_contains($3::VARCHAR[], cart_integration) AND amount_rank >= $4::BIGINT;

-- pageQuery("conversions", 1, "cart_integration.in=clickbank,buygoods&amount.gte=30", upTo, 12, undefined)
SELECT id
FROM conversions
WHERE id <= $2::BIGINT AND account_id = $1::BIGINT AND list_contains($3::VARCHAR[], cart_integration) AND amount_rank >= $4::BIGINT
ORDER BY id
LIMIT 100
OFFSET 1100;

-- pageQuery("conversions", 1, "cart_integration.in=clickbank,buygoods&amount.gte=30", upTo, 12, 41017)
SELECT id
FROM conversions
WHERE id <= $2::BIGINT AND id > $3::BIGINT AND account_id = $1::BIGINT AND list_contains($4::VARCHAR[], cart_integration) AND amount_rank >= $5::BIGINT
ORDER BY id
LIMIT 100;

-- countAndPagesQuery("conversions", 1, "country=US&created_at.between=2025-10-01,2026-03-31", upTo, 1)
SELECT count(*), min(id, 100)
FROM conversions
WHERE id <= $2::BIGINT AND account_id = $1::BIGINT AND country = $3::VARCHAR AND created_at BETWEEN $4::BIGINT AND $5::BIGINT;

-- pageQuery("conversions", 1, "country=US&created_at.between=2025-10-01,2026-03-31", upTo, 12, undefined)
SELECT id
FROM conversions
WHERE id <= $2::BIGINT AND account_id = $1::BIGINT AND country = $3::VARCHAR AND created_at BETWEEN $4::BIGINT AND $5::BIGINT
ORDER BY id
LIMIT 100
OFFSET 1100;

-- pageQuery("conversions", 1, "country=US&created_at.between=2025-10-01,2026-03-31", upTo, 12, 41017)
SELECT id
FROM conversions
WHERE id <= $2::BIGINT AND id > $3::BIGINT AND account_id = $1::BIGINT AND country = $4::VARCHAR AND created_at BETWEEN $5::BIGINT AND $6::BIGINT
ORDER BY id
LIMIT 100;

-- countAndPagesQuery("conversions", 1, "tracking_codes=tc-facebook&tracking_codes.in=tc-1,tc-2", upTo, 1)
SELECT count(*), min(id, 100)
FROM conversions
WHERE id <= $2::BIGINT AND account_id = $1::BIGINT AND id IN (SELECT conversion_id FROM conversion_tracking_codes WHERE account_id = $1::BIGINT AND code = $3::VARCHAR INTERSECT SELECT conversion_id FROM conversion_tracking_codes WHERE account_id = $1::BIGINT AND list_contains($4::VARCHAR[], code));

-- pageQuery("conversions", 1, "tracking_codes=tc-facebook&tracking_codes.in=tc-1,tc-2", upTo, 12, undefined)
SELECT id
FROM conversions
WHERE id <= $2::BIGINT AND account_id = $1::BIGINT AND id IN (SELECT conversion_id FROM conversion_tracking_codes WHERE account_id = $1::BIGINT AND code = $3::VARCHAR INTERSECT SELECT conversion_id FROM conversion_tracking_codes WHERE account_id = $1::BIGINT AND list_contains($4::VARCHAR[], code))
ORDER BY id
LIMIT 100
OFFSET 1100;

-- pageQuery("conversions", 1, "tracking_codes=tc-facebook&tracking_codes.in=tc-1,tc-2", upTo, 12, 41017)
SELECT id
FROM conversions
WHERE id <= $2::BIGINT AND id > $3::BIGINT AND account_id = $1::BIGINT AND id IN (SELECT conversion_id FROM conversion_tracking_codes WHERE account_id = $1::BIGINT AND code = $4::VARCHAR INTERSECT SELECT conversion_id FROM conversion_tracking_codes WHERE account_id = $1::BIGINT AND list_contains($5::VARCHAR[], code))
ORDER BY id
LIMIT 100;

-- countAndPagesQuery("conversions", 1, "user_id=u-1234", upTo, 1)
SELECT count(*), min(id, 100)
FROM conversions
WHERE id <= $2::BIGINT AND account_id = $1::BIGINT AND user_id = $3::VARCHAR;

-- pageQuery("conversions", 1, "user_id=u-1234", upTo, 12, undefined)
SELECT id
FROM conversions
WHERE id <= $2::BIGINT AND account_id = $1::BIGINT AND user_id = $3::VARCHAR
ORDER BY id
LIMIT 100
OFFSET 1100;

-- pageQuery("conversions", 1, "user_id=u-1234", upTo, 12, 41017)
SELECT id
FROM conversions
WHERE id <= $2::BIGINT AND id > $3::BIGINT AND account_id = $1::BIGINT AND user_id = $4::VARCHAR
ORDER BY id
LIMIT 100;

-- countAndPagesQuery("conversions", 1, "created_at.in=2026-01-01,2026-01-02&mobile=true", upTo, 1)
SELECT count(*), min(id, 100)
FROM conversions
WHERE id <= $2::BIGINT AND account_id = $1::BIGINT AND (created_at BETWEEN $3::BIGINT AND $4::BIGINT OR created_at BETWEEN $5::BIGINT AND $6::BIGINT) AND mobile = $7::TINYINT;

-- pageQuery("conversions", 1, "created_at.in=2026-01-01,2026-01-02&mobile=true", upTo, 12, undefined)
SELECT id
FROM conversions
WHERE id <= $2::BIGINT AND account_id = $1::BIGINT AND (created_at BETWEEN $3::BIGINT AND $4::BIGINT OR created_at BETWEEN $5::BIGINT AND $6::BIGINT) AND mobile = $7::TINYINT
ORDER BY id
LIMIT 100
OFFSET 1100;

-- pageQuery("conversions", 1, "created_at.in=2026-01-01,2026-01-02&mobile=true", upTo, 12, 41017)
SELECT id
FROM conversions
WHERE id <= $2::BIGINT AND id > $3::BIGINT AND account_id = $1::BIGINT AND (created_at BETWEEN $4::BIGINT AND $5::BIGINT OR created_at BETWEEN $6::BIGINT AND $7::BIGINT) AND mobile = $8::TINYINT
ORDER BY id
LIMIT 100;

-- countAndPagesQuery("conversions", 1, "", upTo, 1)
SELECT count(*), min(id, 100)
FROM conversions
WHERE id <= $2::BIGINT AND account_id = $1::BIGINT AND TRUE;

-- pageQuery("conversions", 1, "", upTo, 12, undefined)
SELECT id
FROM conversions
WHERE id <= $2::BIGINT AND account_id = $1::BIGINT AND TRUE
ORDER BY id
LIMIT 100
OFFSET 1100;

-- pageQuery("conversions", 1, "", upTo, 12, 41017)
SELECT id
FROM conversions
WHERE id <= $2::BIGINT AND id > $3::BIGINT AND account_id = $1::BIGINT AND TRUE
ORDER BY id
LIMIT 100;

-- countQuery("conversions", 1, "created_at.between=2026-01-01,2026-01-31&utm_source=facebook", above, upTo)
SELECT count(*)
FROM conversions
WHERE id > $2::BIGINT AND id <= $3::BIGINT AND account_id = $1::BIGINT AND created_at BETWEEN $4::BIGINT AND $5::BIGINT AND utm_source = $6::VARCHAR;

-- idsAfterQuery("conversions", 1, "created_at.between=2026-01-01,2026-01-31&utm_source=facebook", upTo, afterId, 2000)
SELECT id
FROM conversions
WHERE id <= $2::BIGINT AND id > $3::BIGINT AND account_id = $1::BIGINT AND created_at BETWEEN $4::BIGINT AND $5::BIGINT AND utm_source = $6::VARCHAR
ORDER BY id
LIMIT 2000;

-- createdAtWindowsQuery("conversions", 1, above, upTo)
SELECT DISTINCT (created_at + 62138016000) // 2592000 - 23973
FROM conversions
WHERE account_id = $1::BIGINT AND id > $2::BIGINT AND id <= $3::BIGINT;

-- notWholeCentsQuery("conversions", 1, above, upTo)
SELECT 1
FROM conversions
WHERE account_id = $1::BIGINT AND id > $2::BIGINT AND id <= $3::BIGINT AND (amount_rank & 1 = 1 OR tax_amount_rank & 1 = 1 OR shipping_amount_rank & 1 = 1)
LIMIT 1;

-- summaryQueries("conversions", 1, "created_at.between=2026-01-01,2026-03-31", upTo, "day,utm_source", New York's local time over 2026).groups
WITH c AS (SELECT * FROM conversions WHERE id <= $2::BIGINT AND account_id = $1::BIGINT AND created_at BETWEEN $3::BIGINT AND $4::BIGINT), g AS (SELECT (c.created_at + CASE WHEN c.created_at < 1772953200 THEN -18000 WHEN c.created_at < 1793512800 THEN -14400 ELSE -18000 END + 62135942400) // 86400 AS k0, c.utm_source AS k1, count(*) AS conversions, count(c.amount_rank) AS amounts, sum(c.amount_rank) AS amount_ranks, sum(c.tax_amount_rank) AS tax_amount_ranks, sum(c.shipping_amount_rank) AS shipping_amount_ranks, count(DISTINCT c.email_hash) AS buyers FROM c GROUP BY ALL)
SELECT strftime(make_timestamp(((k0 - 719166) * 86400) * 1000000), '%Y-%m-%d'), k1, * EXCLUDE (k0, k1), sum(conversions) OVER (), sum(amounts) OVER (), sum(amount_ranks) OVER (), sum(tax_amount_ranks) OVER (), sum(shipping_amount_ranks) OVER ()
FROM g
ORDER BY k0 NULLS LAST, k1 NULLS LAST
LIMIT 10001;

-- summaryQueries("conversions", 1, "created_at.between=2026-01-01,2026-03-31", upTo, "day,utm_source", New York's local time over 2026).totals
WITH c AS (SELECT * FROM conversions WHERE id <= $2::BIGINT AND account_id = $1::BIGINT AND created_at BETWEEN $3::BIGINT AND $4::BIGINT)
SELECT count(DISTINCT c.email_hash)
FROM c;

-- summaryQueries("conversions", 1, "", upTo, "month,cart_integration", New York's local time over 2026).groups
WITH c AS (SELECT * FROM conversions WHERE id <= $2::BIGINT AND account_id = $1::BIGINT AND TRUE), months AS (SELECT day, day - dayofmonth(DATE '1970-01-01' + (day - 719166)::INTEGER) + 1 AS month FROM range(739619, 739986) t(day)), g AS (SELECT months.month AS k0, c.cart_integration AS k1, count(*) AS conversions, count(c.amount_rank) AS amounts, sum(c.amount_rank) AS amount_ranks, sum(c.tax_amount_rank) AS tax_amount_ranks, sum(c.shipping_amount_rank) AS shipping_amount_ranks, count(DISTINCT c.email_hash) AS buyers FROM c JOIN months ON months.day = (c.created_at + CASE WHEN c.created_at < 1772953200 THEN -18000 WHEN c.created_at < 1793512800 THEN -14400 ELSE -18000 END + 62135942400) // 86400 GROUP BY ALL)
SELECT strftime(make_timestamp(((k0 - 719166) * 86400) * 1000000), '%Y-%m-%d'), k1, * EXCLUDE (k0, k1), sum(conversions) OVER (), sum(amounts) OVER (), sum(amount_ranks) OVER (), sum(tax_amount_ranks) OVER (), sum(shipping_amount_ranks) OVER ()
FROM g
ORDER BY k0 NULLS LAST, k1 NULLS LAST
LIMIT 10001;

-- summaryQueries("conversions", 1, "", upTo, "month,cart_integration", New York's local time over 2026).totals
WITH c AS (SELECT * FROM conversions WHERE id <= $2::BIGINT AND account_id = $1::BIGINT AND TRUE)
SELECT count(DISTINCT c.email_hash)
FROM c;

-- summaryQueries("conversions", 1, "utm_source=facebook", upTo, "tracking_codes", New York's local time over 2026).groups
WITH c AS (SELECT * FROM conversions WHERE id <= $2::BIGINT AND account_id = $1::BIGINT AND utm_source = $3::VARCHAR), g AS (SELECT e0.code AS k0, count(*) AS conversions, count(c.amount_rank) AS amounts, sum(c.amount_rank) AS amount_ranks, sum(c.tax_amount_rank) AS tax_amount_ranks, sum(c.shipping_amount_rank) AS shipping_amount_ranks, count(DISTINCT c.email_hash) AS buyers FROM c LEFT JOIN conversion_tracking_codes e0 ON e0.conversion_id = c.id GROUP BY ALL)
SELECT k0, * EXCLUDE (k0)
FROM g
ORDER BY k0 NULLS LAST
LIMIT 10001;

-- summaryQueries("conversions", 1, "utm_source=facebook", upTo, "tracking_codes", New York's local time over 2026).totals
WITH c AS (SELECT * FROM conversions WHERE id <= $2::BIGINT AND account_id = $1::BIGINT AND utm_source = $3::VARCHAR)
SELECT count(*) AS conversions, count(c.amount_rank) AS amounts, sum(c.amount_rank) AS amount_ranks, sum(c.tax_amount_rank) AS tax_amount_ranks, sum(c.shipping_amount_rank) AS shipping_amount_ranks, count(DISTINCT c.email_hash) AS buyers
FROM c;

-- summaryQueries("conversions", 1, "utm_source=facebook", upTo, "tracking_codes", no local time, two rows beyond upTo).groups
WITH c AS (SELECT id, created_at, amount, tax_amount, shipping_amount, email_hash, amount_rank, tax_amount_rank, shipping_amount_rank FROM conversions WHERE id <= $2::BIGINT AND account_id = $1::BIGINT AND utm_source = $4::VARCHAR UNION ALL SELECT *, CASE WHEN amount >= 10000000000000 THEN 2000000000000001 WHEN amount <= -10000000000000 THEN -2000000000000001 ELSE (2 * (CASE WHEN (floor(amount * 100) + 1) / 100 <= amount THEN floor(amount * 100) + 1 WHEN floor(amount * 100) / 100 > amount THEN floor(amount * 100) - 1 ELSE floor(amount * 100) END) + CASE WHEN (CASE WHEN (floor(amount * 100) + 1) / 100 <= amount THEN floor(amount * 100) + 1 WHEN floor(amount * 100) / 100 > amount THEN floor(amount * 100) - 1 ELSE floor(amount * 100) END) / 100 = amount THEN 0 ELSE 1 END)::BIGINT END AS amount_rank, CASE WHEN tax_amount >= 10000000000000 THEN 2000000000000001 WHEN tax_amount <= -10000000000000 THEN -2000000000000001 ELSE (2 * (CASE WHEN (floor(tax_amount * 100) + 1) / 100 <= tax_amount THEN floor(tax_amount * 100) + 1 WHEN floor(tax_amount * 100) / 100 > tax_amount THEN floor(tax_amount * 100) - 1 ELSE floor(tax_amount * 100) END) + CASE WHEN (CASE WHEN (floor(tax_amount * 100) + 1) / 100 <= tax_amount THEN floor(tax_amount * 100) + 1 WHEN floor(tax_amount * 100) / 100 > tax_amount THEN floor(tax_amount * 100) - 1 ELSE floor(tax_amount * 100) END) / 100 = tax_amount THEN 0 ELSE 1 END)::BIGINT END AS tax_amount_rank, CASE WHEN shipping_amount >= 10000000000000 THEN 2000000000000001 WHEN shipping_amount <= -10000000000000 THEN -2000000000000001 ELSE (2 * (CASE WHEN (floor(shipping_amount * 100) + 1) / 100 <= shipping_amount THEN floor(shipping_amount * 100) + 1 WHEN floor(shipping_amount * 100) / 100 > shipping_amount THEN floor(shipping_amount * 100) - 1 ELSE floor(shipping_amount * 100) END) + CASE WHEN (CASE WHEN (floor(shipping_amount * 100) + 1) / 100 <= shipping_amount THEN floor(shipping_amount * 100) + 1 WHEN floor(shipping_amount * 100) / 100 > shipping_amount THEN floor(shipping_amount * 100) - 1 ELSE floor(shipping_amount * 100) END) / 100 = shipping_amount THEN 0 ELSE 1 END)::BIGINT END AS shipping_amount_rank FROM (SELECT unnest(b.id) AS id, unnest(b.created_at) AS created_at, unnest(b.amount) AS amount, unnest(b.tax_amount) AS tax_amount, unnest(b.shipping_amount) AS shipping_amount, unnest(b.email_hash) AS email_hash FROM (SELECT json_transform($5::VARCHAR, '{"id":["BIGINT"],"created_at":["BIGINT"],"amount":["DOUBLE"],"tax_amount":["DOUBLE"],"shipping_amount":["DOUBLE"],"email_hash":["UBIGINT"]}') AS b))), g AS (SELECT e0.code AS k0, count(*) AS conversions, count(c.amount_rank) AS amounts, sum(c.amount_rank) AS amount_ranks, sum(c.tax_amount_rank) AS tax_amount_ranks, sum(c.shipping_amount_rank) AS shipping_amount_ranks, count(DISTINCT c.email_hash) AS buyers FROM c LEFT JOIN (SELECT conversion_id, code FROM conversion_tracking_codes WHERE conversion_id <= $2::BIGINT UNION ALL SELECT unnest(e.ids), unnest(e.elements) FROM (SELECT json_transform($3::VARCHAR, '{"ids":["BIGINT"],"elements":["VARCHAR"]}') AS e)) e0 ON e0.conversion_id = c.id GROUP BY ALL)
SELECT k0, * EXCLUDE (k0)
FROM g
ORDER BY k0 NULLS LAST
LIMIT 10001;

-- summaryQueries("conversions", 1, "utm_source=facebook", upTo, "tracking_codes", no local time, two rows beyond upTo).totals
WITH c AS (SELECT id, created_at, amount, tax_amount, shipping_amount, email_hash, amount_rank, tax_amount_rank, shipping_amount_rank FROM conversions WHERE id <= $2::BIGINT AND account_id = $1::BIGINT AND utm_source = $3::VARCHAR UNION ALL SELECT *, CASE WHEN amount >= 10000000000000 THEN 2000000000000001 WHEN amount <= -10000000000000 THEN -2000000000000001 ELSE (2 * (CASE WHEN (floor(amount * 100) + 1) / 100 <= amount THEN floor(amount * 100) + 1 WHEN floor(amount * 100) / 100 > amount THEN floor(amount * 100) - 1 ELSE floor(amount * 100) END) + CASE WHEN (CASE WHEN (floor(amount * 100) + 1) / 100 <= amount THEN floor(amount * 100) + 1 WHEN floor(amount * 100) / 100 > amount THEN floor(amount * 100) - 1 ELSE floor(amount * 100) END) / 100 = amount THEN 0 ELSE 1 END)::BIGINT END AS amount_rank, CASE WHEN tax_amount >= 10000000000000 THEN 2000000000000001 WHEN tax_amount <= -10000000000000 THEN -2000000000000001 ELSE (2 * (CASE WHEN (floor(tax_amount * 100) + 1) / 100 <= tax_amount THEN floor(tax_amount * 100) + 1 WHEN floor(tax_amount * 100) / 100 > tax_amount THEN floor(tax_amount * 100) - 1 ELSE floor(tax_amount * 100) END) + CASE WHEN (CASE WHEN (floor(tax_amount * 100) + 1) / 100 <= tax_amount THEN floor(tax_amount * 100) + 1 WHEN floor(tax_amount * 100) / 100 > tax_amount THEN floor(tax_amount * 100) - 1 ELSE floor(tax_amount * 100) END) / 100 = tax_amount THEN 0 ELSE 1 END)::BIGINT END AS tax_amount_rank, CASE WHEN shipping_amount >= 10000000000000 THEN 2000000000000001 WHEN shipping_amount <= -10000000000000 THEN -2000000000000001 ELSE (2 * (CASE WHEN (floor(shipping_amount * 100) + 1) / 100 <= shipping_amount THEN floor(shipping_amount * 100) + 1 WHEN floor(shipping_amount * 100) / 100 > shipping_amount THEN floor(shipping_amount * 100) - 1 ELSE floor(shipping_amount * 100) END) + CASE WHEN (CASE WHEN (floor(shipping_amount * 100) + 1) / 100 <= shipping_amount THEN floor(shipping_amount * 100) + 1 WHEN floor(shipping_amount * 100) / 100 > shipping_amount THEN floor(shipping_amount * 100) - 1 ELSE floor(shipping_amount * 100) END) / 100 = shipping_amount THEN 0 ELSE 1 END)::BIGINT END AS shipping_amount_rank FROM (SELECT unnest(b.id) AS id, unnest(b.created_at) AS created_at, unnest(b.amount) AS amount, unnest(b.tax_amount) AS tax_amount, unnest(b.shipping_amount) AS shipping_amount, unnest(b.email_hash) AS email_hash FROM (SELECT json_transform($4::VARCHAR, '{"id":["BIGINT"],"created_at":["BIGINT"],"amount":["DOUBLE"],"tax_amount":["DOUBLE"],"shipping_amount":["DOUBLE"],"email_hash":["UBIGINT"]}') AS b)))
SELECT count(*) AS conversions, count(c.amount_rank) AS amounts, sum(c.amount_rank) AS amount_ranks, sum(c.tax_amount_rank) AS tax_amount_ranks, sum(c.shipping_amount_rank) AS shipping_amount_ranks, count(DISTINCT c.email_hash) AS buyers
FROM c;

-- summaryQueries("conversions", 1, "", upTo, "month", UTC over 2026, with the fix of money that is not whole cents).groups
WITH c AS (SELECT * FROM conversions WHERE id <= $2::BIGINT AND account_id = $1::BIGINT AND TRUE), months AS (SELECT day, day - dayofmonth(DATE '1970-01-01' + (day - 719166)::INTEGER) + 1 AS month FROM range(739619, 739986) t(day)), g AS (SELECT months.month AS k0, count(*) AS conversions, count(c.amount_rank) AS amounts, sum(c.amount_rank) AS amount_ranks, sum(c.tax_amount_rank) AS tax_amount_ranks, sum(c.shipping_amount_rank) AS shipping_amount_ranks, sum(CASE WHEN c.amount_rank & 1 = 1 THEN (CASE WHEN abs(c.amount) < 67108864 THEN c.amount::DECIMAL(38,6) ELSE c.amount::VARCHAR::DECIMAL(38,6) END) * 2 - (c.amount_rank * 0.01)::DECIMAL(38,6) END) AS amount_fix, sum(CASE WHEN c.tax_amount_rank & 1 = 1 THEN (CASE WHEN abs(c.tax_amount) < 67108864 THEN c.tax_amount::DECIMAL(38,6) ELSE c.tax_amount::VARCHAR::DECIMAL(38,6) END) * 2 - (c.tax_amount_rank * 0.01)::DECIMAL(38,6) END) AS tax_amount_fix, sum(CASE WHEN c.shipping_amount_rank & 1 = 1 THEN (CASE WHEN abs(c.shipping_amount) < 67108864 THEN c.shipping_amount::DECIMAL(38,6) ELSE c.shipping_amount::VARCHAR::DECIMAL(38,6) END) * 2 - (c.shipping_amount_rank * 0.01)::DECIMAL(38,6) END) AS shipping_amount_fix, count(DISTINCT c.email_hash) AS buyers FROM c JOIN months ON months.day = (c.created_at + 0 + 62135942400) // 86400 GROUP BY ALL)
SELECT strftime(make_timestamp(((k0 - 719166) * 86400) * 1000000), '%Y-%m-%d'), * EXCLUDE (k0), sum(conversions) OVER (), sum(amounts) OVER (), sum(amount_ranks) OVER (), sum(tax_amount_ranks) OVER (), sum(shipping_amount_ranks) OVER (), sum(amount_fix) OVER (), sum(tax_amount_fix) OVER (), sum(shipping_amount_fix) OVER ()
FROM g
ORDER BY k0 NULLS LAST
LIMIT 10001;
