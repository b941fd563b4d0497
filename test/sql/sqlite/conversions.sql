-- Written by `npm run sql:update` (test/sql/snapshots.ts); test/sql/snapshots.test.ts fails when the code sends other SQL.

-- ConversionRepository.pageJsonByIds(1, [101,102,103]), a page sends up to 100 ids
select count(*) filter (where account_id = ?) as "found", CAST(coalesce(string_agg(entry, ',') filter (where account_id = ?), '') AS BLOB) as "json"
from (select "account_id", '{"id":' || id || ',' || substr(entry_json, 2) as "entry" from "conversions" where "id" in (?, ?, ?) order by "id") as "entries";

-- ConversionRepository.entriesByIds(1, [101,102,103]), an export to CSV sends up to 1,000 ids
select "id", "account_id", "entry_json"
from "conversions"
where "id" in (?, ?, ?)
order by "id";

-- ConversionRepository.buyerPage(1, "u-42", 2), one buyer's second page [1 of 2]
select count(*) as "total"
from "conversions"
where "account_id" = ? and "user_id" = ?;

-- ConversionRepository.buyerPage(1, "u-42", 2), one buyer's second page [2 of 2]
select "id"
from "conversions"
where "account_id" = ? and "user_id" = ?
order by "id"
limit ?
offset ?;

-- ConversionRepository.ndjsonByIds(1, [101,102,103]), an export sends up to 1,000 ids
select CAST(coalesce(string_agg(line, '') filter (where account_id = ?), '') AS BLOB) as "lines"
from (select "account_id", '{"id":' || id || ',' || substr(entry_json, 2) || ? as "line" from "conversions" where "id" in (?, ?, ?) order by "id") as "lines";

-- ConversionRepository.bumpVersion(1)
insert into "conversion_versions" ("account_id", "version", "newest_id")
values (?, ?, (select coalesce(max(id), 0) as "id" from "conversions"))
on conflict ("account_id") do update
set "version" = "conversion_versions"."version" + ?, "newest_id" = "excluded"."newest_id";

-- ConversionRepository.insertNew(1, two conversions), an import sends its rows in batches
/* kept prepared */ insert or ignore into "conversions" ("account_id", "created_at", "cart_integration", "receipt", "user_id", "entry_json")
values (?, ?, ?, ?, ?, ?),
       (?, ?, ?, ?, ?, ?);

-- ConversionRepository.largestId(), an import begins its advance copy (advance-copy.ts)
select coalesce(max(id), 0) as "id"
from "conversions";

-- ConversionRepository.idsAfter(100, 5001), an import copies 5,000 new rows: their ids
select "id"
from "conversions"
where "id" > ?
order by "id"
limit ?;

-- ConversionRepository.rowsAfter(100, 5000, ["created_at","entry_json"]), an import copies rows some of which were there already
select "id", "account_id", "created_at", "entry_json"
from "conversions"
where "id" > ?
order by "id"
limit ?;

-- ConversionRepository.markImport("3b7c0e5e-1f5a-4b61-9d55-0c2a43d0a1b2", 101, 5100), an import's transaction marks the rows it copied [1 of 2]
delete from "conversion_imports";

-- ConversionRepository.markImport("3b7c0e5e-1f5a-4b61-9d55-0c2a43d0a1b2", 101, 5100), an import's transaction marks the rows it copied [2 of 2]
insert into "conversion_imports" ("token", "first_id", "last_id")
values (?, ?, ?);

-- ConversionRepository.insertEach(two conversions of account 1), new receipts
insert or ignore into "conversions" ("created_at", "cart_integration", "receipt", "user_id", "entry_json", "account_id")
values (?, ?, ?, ?, ?, ?),
       (?, ?, ?, ?, ?, ?)
returning "id", "account_id", "cart_integration", "receipt";

-- ConversionRepository.insertEach(two conversions of account 1), the second receipt there already [1 of 2]
insert or ignore into "conversions" ("created_at", "cart_integration", "receipt", "user_id", "entry_json", "account_id")
values (?, ?, ?, ?, ?, ?),
       (?, ?, ?, ?, ?, ?)
returning "id", "account_id", "cart_integration", "receipt";

-- ConversionRepository.insertEach(two conversions of account 1), the second receipt there already [2 of 2]
select "id", "account_id", "cart_integration", "receipt"
from "conversions"
where ("account_id", "cart_integration", "receipt") in ((?, ?, ?));
