/**
 * The SQL functions a read-only query may call: built-ins of PostgreSQL, MySQL/MariaDB, SQLite and
 * SQL Server that compute a value and change nothing (no writes, no locks, no sessions, no files, no
 * network, no sleeping). Every other function, every user-defined one included, makes the query a
 * mutation. Pure data.
 *
 * Sources: PostgreSQL 18 manual, chapter 9 "Functions and Operators"; MySQL 8.4 reference manual,
 * chapter 14 "Functions and Operators"; SQLite "Built-In Scalar SQL Functions", "Aggregate Functions",
 * "Date And Time Functions", "JSON Functions"; SQL Server "Built-in functions (Transact-SQL)". Left out
 * on purpose although they only read: functions that read server files (`pg_read_file`, `load_file`,
 * `readfile`), reach the network (`dblink*`), take advisory locks, or run SQL text (`query_to_xml`).
 */

const list = (s: string): Set<string> => new Set(s.trim().split(/\s+/));

/** Lower-case names of side-effect-free built-ins (matched after the parser's own case folding). */
export const PURE_SQL_FUNCTIONS: ReadonlySet<string> = list(`
  count sum avg min max every bool_and bool_or bit_and bit_or bit_xor array_agg string_agg json_agg jsonb_agg
  json_object_agg jsonb_object_agg xmlagg stddev stddev_pop stddev_samp variance var_pop var_samp corr covar_pop
  covar_samp regr_slope regr_intercept regr_count regr_r2 percentile_cont percentile_disc mode any_value
  group_concat total listagg approx_count_distinct count_big checksum_agg
  row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value
  abs ceil ceiling floor round trunc truncate sqrt cbrt power pow exp ln log log10 log2 mod sign pi degrees radians
  sin cos tan asin acos atan atan2 cot sinh cosh tanh div gcd lcm factorial width_bucket greatest least random rand
  scale min_scale trim_scale
  lower upper lcase ucase initcap length char_length character_length octet_length bit_length substring substr
  mid trim ltrim rtrim btrim concat concat_ws replace split_part left right position strpos instr locate
  starts_with ends_with format lpad rpad repeat reverse translate ascii chr char unicode md5 sha1 sha2 sha224
  sha256 sha384 sha512 encode decode to_hex hex unhex quote quote_ident quote_literal quote_nullable
  regexp_replace regexp_match regexp_matches regexp_split_to_array regexp_split_to_table regexp_like regexp_substr
  regexp_instr regexp_count like glob soundex difference space str stuff charindex patindex printf
  string_to_array string_to_table array_to_string field find_in_set elt make_set format_number
  to_char to_date to_timestamp to_number to_ascii convert_from convert_to normalize casefold unistr
  now current_date current_time current_timestamp localtime localtimestamp statement_timestamp
  transaction_timestamp clock_timestamp timeofday date_trunc date_part date_bin extract age make_date make_time
  make_timestamp make_timestamptz make_interval justify_days justify_hours justify_interval isfinite
  date time datetime julianday unixepoch strftime timediff curdate curtime sysdate utc_date utc_time
  utc_timestamp date_format str_to_date datediff timestampdiff timestampadd date_add date_sub adddate subdate
  addtime subtime unix_timestamp from_unixtime year month day dayofmonth dayofweek dayofyear weekday week
  weekofyear yearweek quarter hour minute second microsecond last_day makedate maketime monthname dayname
  period_add period_diff sec_to_time time_to_sec to_days from_days time_format convert_tz getdate
  getutcdate sysdatetime sysutcdatetime datename dateadd datefromparts eomonth
  coalesce nullif ifnull isnull nvl iif if cast convert try_cast try_convert typeof pg_typeof format_type
  json_build_object jsonb_build_object json_build_array jsonb_build_array json_object jsonb_object json_array
  to_json to_jsonb row_to_json array_to_json json_array_elements jsonb_array_elements json_array_elements_text
  jsonb_array_elements_text json_each jsonb_each json_each_text jsonb_each_text json_extract_path
  jsonb_extract_path json_extract_path_text jsonb_extract_path_text json_typeof jsonb_typeof jsonb_pretty
  json_array_length jsonb_array_length jsonb_set jsonb_insert jsonb_strip_nulls json_strip_nulls
  jsonb_path_query jsonb_path_query_array jsonb_path_query_first jsonb_path_exists jsonb_path_match
  json_object_keys jsonb_object_keys json_populate_record jsonb_populate_record json_to_record
  jsonb_to_record json_to_recordset jsonb_to_recordset json_extract json_unquote json_quote json_contains
  json_contains_path json_keys json_length json_type json_valid json_search json_value json_query
  json_tree json_group_array json_group_object json_patch json_remove json_replace json_insert json_set
  isjson json_modify openjson
  generate_series generate_subscripts unnest array_length array_lower array_upper array_position
  array_positions array_cat array_append array_prepend array_remove array_replace array_dims array_ndims
  cardinality array_fill trim_array array_sample array_shuffle
  gen_random_uuid uuid uuid_generate_v4 newid
  current_database current_schema current_schemas current_catalog current_user session_user user
  current_role version database schema connection_id pg_backend_pid inet_client_addr inet_server_addr
  has_table_privilege has_column_privilege has_schema_privilege has_database_privilege
  has_function_privilege pg_has_role obj_description col_description shobj_description
  pg_get_viewdef pg_get_constraintdef pg_get_indexdef pg_get_functiondef pg_get_function_arguments
  pg_get_function_result pg_get_triggerdef pg_get_expr pg_get_keywords pg_get_serial_sequence
  pg_get_userbyid pg_size_pretty pg_size_bytes pg_relation_size pg_total_relation_size pg_table_size
  pg_indexes_size pg_database_size pg_tablespace_size pg_column_size pg_table_is_visible
  pg_type_is_visible pg_function_is_visible pg_is_in_recovery pg_postmaster_start_time
  pg_conf_load_time pg_current_wal_lsn pg_last_wal_receive_lsn pg_last_wal_replay_lsn
  pg_encoding_to_char pg_char_to_encoding pg_client_encoding to_regclass to_regtype to_regproc
  to_regnamespace to_regrole current_setting pg_get_partkeydef pg_index_column_has_property
  host hostmask masklen netmask network broadcast abbrev family inet_merge inet_same_family set_masklen
  text numeric int4 int8 float8 bool varchar
  xmlelement xmlforest xmlconcat xmlroot xmlparse xmlserialize xmlexists xpath xpath_exists xml_is_well_formed
  tsvector to_tsvector to_tsquery plainto_tsquery phraseto_tsquery websearch_to_tsquery ts_rank ts_rank_cd
  ts_headline setweight strip numnode querytree length_tsvector
  st_astext st_asgeojson st_distance st_contains st_intersects st_within st_x st_y st_area st_length
  st_makepoint st_setsrid st_transform st_geomfromtext st_dwithin st_buffer
  date_diff datetime_diff timestamp_diff date_from_parts
  error_message error_number exists timezone similar_to_escape overlay pg_blocking_pids pg_wal_lsn_diff
`);

/** TABLESAMPLE methods that are built in (PostgreSQL 18, SELECT "TABLESAMPLE sampling_method"). */
export const PURE_SAMPLE_METHODS: ReadonlySet<string> = list('system bernoulli');

/** SQLite PRAGMAs that only report when called without a value (SQLite "PRAGMA Statements"). */
export const READ_PRAGMAS: ReadonlySet<string> = list(`
  table_info table_xinfo table_list index_list index_info index_xinfo foreign_key_list database_list
  collation_list compile_options function_list module_list pragma_list integrity_check quick_check
  foreign_key_check page_count page_size freelist_count schema_version user_version application_id
  encoding journal_mode data_version
`);

/** Built-in PostgreSQL type names as written unqualified in a cast (`x::text`); others may run a domain's checks. */
export const BUILTIN_TYPES: ReadonlySet<string> = list(`
  text varchar char bpchar name int int2 int4 int8 smallint integer bigint numeric decimal real float4 float8
  double bool boolean date time timetz timestamp timestamptz interval json jsonb uuid bytea inet cidr macaddr
  money xml tsvector tsquery point line lseg box path polygon circle oid regclass regtype regproc regprocedure
  regnamespace regrole regconfig regdictionary int4range int8range numrange tsrange tstzrange daterange bit varbit
  record anyelement void citext
`);
