#!/usr/bin/env bash
# docs/adopting.md's Java recipe (examples/jdbc/IdgenJdbc.java), compiled and run against Debian's
# pgjdbc (libpostgresql-jdbc-java) and Hibernate 3.6 (libhibernate3-java, the version Debian 12
# ships), installed here if missing:
#   - pgjdbc: getGeneratedKeys gives the Snowflake ID of one INSERT, and one key per row of a batch;
#     a free created_at with LocalDateTime and LocalDate parameters (a timestamp and a date), and
#     created_at::date = a LocalDate: the key's index read, the rows of the setting off;
#   - Hibernate: an IdentifierGenerator on idgen.segment_alloc hands out 120 distinct ids from
#     whole committed ranges (3 ranges of step 50);
#   - adopted sequences (examples/jdbc/AdoptedHibernate.java): an entity keyed the JPA way
#     (@GeneratedValue(strategy = SEQUENCE), allocationSize 50, Hibernate's pooled optimizer), its
#     sequence made by hbm2ddl and adopted, the application unchanged: two application instances
#     save 300 entities each, interleaved; 600 distinct Snowflake-range keys, each the block of its
#     instance alone.
# Skipped, saying why, when the packages cannot be installed.
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/clients.sh"
PORT=$(port 0)
PKGS=(libpostgresql-jdbc-java libhibernate3-java libjavassist-java)
command -v javac >/dev/null || PKGS+=(default-jdk-headless)
if ! apt_install_missing "${PKGS[@]}" >"$WORK/apt_java.log" 2>&1; then
  skip_test "apt-get could not install ${PKGS[*]} ($(tail -1 "$WORK/apt_java.log"))"
fi
CP=$(printf '/usr/share/java/%s.jar:' postgresql hibernate3 geronimo-jpa_2.0_spec geronimo-jta-1.2-spec \
  hibernate-commons-annotations dom4j commons-collections3 antlr javassist slf4j-api slf4j-nop)
BUILD="$WORK/java_build"
rm -rf "$BUILD" && mkdir -p "$BUILD"
javac -d "$BUILD" -cp "$CP" "$REPO/examples/jdbc/IdgenJdbc.java" "$REPO/examples/jdbc/AdoptedHibernate.java"
echo "  $(java -version 2>&1 | head -1), pgjdbc $(dpkg-query -W -f='${Version}' libpostgresql-jdbc-java), Hibernate $(dpkg-query -W -f='${Version}' libhibernate3-java)"
cluster_init clients_java $PORT
cluster_start clients_java
trap 'cluster_stop clients_java immediate' EXIT
q $PORT "CREATE EXTENSION pg_idgen"
legacy_table $PORT
out=$(java -cp "$CP$BUILD" IdgenJdbc "jdbc:postgresql://127.0.0.1:$PORT/postgres?user=postgres" legacy)
echo "    $out"
check_legacy_row "$out"
check "pgjdbc: getGeneratedKeys gives the Snowflake ID of one INSERT and 100 keys for a batch of 100" eq \
  "$(field "$out" jdbc_one_above_2_pow_53)|$(field "$out" jdbc_batch_keys)" "True|100"
check "pgjdbc, a free created_at: a LocalDateTime and a LocalDate (a timestamp and a date) read by the key range alone, and so is created_at::date = a LocalDate (a parameter of a plan made for it, in a zone whose clocks do not change); each the rows of the setting off" eq \
  "$(field "$out" jdbc_created_at_local_date_time)|$(field "$out" jdbc_created_at_local_date)|$(field "$out" jdbc_created_at_cast_date)" \
  "range True|range True|range True"
check "Hibernate on idgen.segment_alloc: 120 rows, 120 distinct ids, 1 to 120, from 3 ranges of 50" eq \
  "$(field "$out" hibernate_rows)|$(field "$out" hibernate_distinct)|$(field "$out" hibernate_min)|$(field "$out" hibernate_max)|$(field "$out" ranges_taken)" \
  "120|120|1|120|3"
q $PORT "CREATE DATABASE adopted" >/dev/null
qdb $PORT adopted "CREATE EXTENSION pg_idgen" >/dev/null
java -cp "$CP$BUILD" AdoptedHibernate "jdbc:postgresql://127.0.0.1:$PORT/adopted?user=postgres" create >/dev/null
check "Hibernate's sequence (INCREMENT 50, made by hbm2ddl) adopted" grep -q 'adopt sequence public.shipment_seq' \
  <<<"$(qdb $PORT adopted "SELECT result FROM idgen.adopt_sequences('public')")"
out=$(java -cp "$CP$BUILD" AdoptedHibernate "jdbc:postgresql://127.0.0.1:$PORT/adopted?user=postgres" run)
echo "    $out"
check "Hibernate, two instances, allocationSize 50: 600 rows, 600 distinct keys, all in the Snowflake range" eq \
  "$(field "$out" rows)|$(field "$out" distinct)|$(field "$out" min_above_2_pow_53)" "600|600|True"
check "... each key in the 101-ID block of one draw, all of them this node's (worker 0)" eq \
  "$(qdb $PORT adopted "SELECT count(*) FILTER (WHERE id_worker_id(id) IS DISTINCT FROM 0) FROM shipments")" 0
finish
