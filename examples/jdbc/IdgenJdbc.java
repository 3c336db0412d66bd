// pg_idgen from Java: pgjdbc (getGeneratedKeys, one row and a batch; a free created_at with
// LocalDateTime and LocalDate parameters) and a Hibernate
// IdentifierGenerator that takes whole ranges from idgen.segment_alloc (Hibernate's pooled
// sequence generators cannot use segment types). Built and run against Debian's
// libpostgresql-jdbc-java (pgjdbc 42.5) and libhibernate3-java (Hibernate 3.6) by
// tests/system/clients_java.sh:
//   java -cp <jars>:. IdgenJdbc 'jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres' [converted_table]
// Prints one JSON line of what it found.

import java.io.Serializable;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashSet;
import java.util.Properties;
import java.util.Set;

import javax.persistence.Entity;
import javax.persistence.GeneratedValue;
import javax.persistence.Id;
import javax.persistence.Table;

import org.hibernate.HibernateException;
import org.hibernate.Session;
import org.hibernate.SessionFactory;
import org.hibernate.cfg.Configuration;
import org.hibernate.dialect.Dialect;
import org.hibernate.engine.SessionImplementor;
import org.hibernate.id.Configurable;
import org.hibernate.id.IdentifierGenerator;
import org.hibernate.type.Type;
import org.hibernate.annotations.GenericGenerator;
import org.hibernate.annotations.Parameter;

public class IdgenJdbc {

    /** Hands out the IDs of ranges from idgen.segment_alloc(biz_type), one range at a time:
     * the IDs x with start_id < x <= end_id and x % delta = remainder. Each range is committed by
     * the server before it is returned, so no two generators (or servers) get the same IDs. */
    public static class SegmentIdGenerator implements IdentifierGenerator, Configurable {
        private String bizType;
        private long next, last, delta;

        public void configure(Type type, Properties params, Dialect dialect) {
            bizType = params.getProperty("biz_type");
        }

        public synchronized Serializable generate(SessionImplementor session, Object object) {
            if (delta == 0 || next > last) {
                try (PreparedStatement ps = session.connection().prepareStatement(
                        "SELECT first_id, last_id, delta FROM idgen.segment_alloc(?)")) {
                    ps.setString(1, bizType);
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        next = rs.getLong(1);
                        last = rs.getLong(2);
                        delta = rs.getLong(3);
                    }
                } catch (SQLException e) {
                    throw new HibernateException("idgen.segment_alloc('" + bizType + "') failed: " + e.getMessage(), e);
                }
            }
            long id = next;
            next += delta;
            return id;
        }
    }

    @Entity
    @Table(name = "java_invoices")
    public static class Invoice {
        @Id
        @GeneratedValue(generator = "segment")
        @GenericGenerator(name = "segment", strategy = "IdgenJdbc$SegmentIdGenerator",
                parameters = @Parameter(name = "biz_type", value = "invoice"))
        private Long id;
        private String item;

        public Long getId() { return id; }
        public void setId(Long id) { this.id = id; }
        public String getItem() { return item; }
        public void setItem(String item) { this.item = item; }
    }

    /**
     * A free created_at (docs/snowflake.md#a-free-created_at) as JDBC code asks for it: a
     * LocalDateTime and a LocalDate, which pgjdbc sends as a timestamp and a date, and "on a day"
     * as created_at::date = ?. For each: what the plan reads ("range": the key range alone, a
     * local day's too where the zone's clocks do not change near it; "around": a range around a
     * local day, the comparison kept; "scan": the condition on every
     * row), and whether it finds the rows it finds with idgen.time_conditions off.
     */
    static void createdAt(Connection c, StringBuilder out) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("CREATE TABLE java_ca (id bigint PRIMARY KEY, v int)");
            s.execute("INSERT INTO java_ca SELECT id_from_timestamp(now() - g * interval '1 minute') + g % 1000, g "
                    + "FROM generate_series(1, 60000) g");
            s.execute("CREATE VIEW java_ca_v AS SELECT *, id_timestamp(id) AS created_at FROM java_ca");
            s.execute("ANALYZE java_ca");
            s.execute("SET TimeZone = 'Asia/Kathmandu'");
        }
        java.time.LocalDateTime since;
        java.time.LocalDate day;
        try (Statement s = c.createStatement();
             ResultSet r = s.executeQuery("SELECT localtimestamp(0) - interval '3 days', current_date - 10")) {
            r.next();
            since = r.getObject(1, java.time.LocalDateTime.class);
            day = r.getObject(2, java.time.LocalDate.class);
        }
        Object[][] cases = {
            {"local_date_time", "created_at >= ?", new Object[] {since}},
            {"local_date", "created_at >= ? AND created_at < ?", new Object[] {day, day.plusDays(1)}},
            {"cast_date", "created_at::date = ?", new Object[] {day}},
        };
        for (Object[] k : cases) {
            String where = (String) k[1];
            Object[] params = (Object[]) k[2];
            long on = count(c, where, params);
            StringBuilder plan = new StringBuilder();
            try (PreparedStatement ps = c.prepareStatement("EXPLAIN SELECT * FROM java_ca_v WHERE " + where)) {
                for (int i = 0; i < params.length; i++) ps.setObject(i + 1, params[i]);
                try (ResultSet r = ps.executeQuery()) { while (r.next()) plan.append(r.getString(1)).append('\n'); }
            }
            try (Statement s = c.createStatement()) { s.execute("SET idgen.time_conditions = off"); }
            long off = count(c, where, params);
            try (Statement s = c.createStatement()) { s.execute("RESET idgen.time_conditions"); }
            String p = plan.toString();
            String how = p.contains("idgen_internal.time_local_") || p.contains("idgen_internal.time_trunc_") ? "around"
                    : p.matches("(?s).*\\(id [<>]= .*") && !p.contains("id_timestamp(") ? "range" : "scan";
            out.append(",\"jdbc_created_at_").append(k[0]).append("\":\"").append(how).append(' ')
                    .append(on == off && on > 0 ? "True" : "False").append('"');
        }
        try (Statement s = c.createStatement()) {
            s.execute("DROP VIEW java_ca_v");
            s.execute("DROP TABLE java_ca");
            s.execute("RESET TimeZone");
        }
    }

    static long count(Connection c, String where, Object[] params) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM java_ca_v WHERE " + where)) {
            for (int i = 0; i < params.length; i++) ps.setObject(i + 1, params[i]);
            try (ResultSet r = ps.executeQuery()) { r.next(); return r.getLong(1); }
        }
    }

    public static void main(String[] args) throws Exception {
        String url = args[0];
        StringBuilder out = new StringBuilder("{");
        try (Connection c = DriverManager.getConnection(url)) {
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TABLE java_orders (id bigint PRIMARY KEY DEFAULT snowflake_next(), item text)");
                s.execute("CREATE TABLE java_invoices (id bigint PRIMARY KEY, item varchar(255))");
                s.execute("SELECT idgen.segment_create('invoice', step => 50)");
            }
            // One row: the key the database made, through getGeneratedKeys (RETURNING "id").
            long one;
            try (PreparedStatement ps = c.prepareStatement(
                    "INSERT INTO java_orders (item) VALUES (?)", new String[] {"id"})) {
                ps.setString(1, "one");
                ps.executeUpdate();
                try (ResultSet k = ps.getGeneratedKeys()) { k.next(); one = k.getLong(1); }
            }
            // A batch: one generated key per row.
            Set<Long> batch = new HashSet<>();
            try (PreparedStatement ps = c.prepareStatement(
                    "INSERT INTO java_orders (item) VALUES (?)", new String[] {"id"})) {
                for (int i = 0; i < 100; i++) { ps.setString(1, "item " + i); ps.addBatch(); }
                ps.executeBatch();
                try (ResultSet k = ps.getGeneratedKeys()) { while (k.next()) batch.add(k.getLong(1)); }
            }
            // A table converted from serial (idgen.convert_to_snowflake), if one is named.
            if (args.length > 1) {
                try (PreparedStatement ps = c.prepareStatement(
                        "INSERT INTO " + args[1] + " DEFAULT VALUES", new String[] {"id"})) {
                    ps.executeUpdate();
                    try (ResultSet k = ps.getGeneratedKeys()) {
                        k.next();
                        out.append("\"converted_table_id\":").append(k.getLong(1)).append(",");
                    }
                }
            }
            out.append("\"jdbc_one_above_2_pow_53\":").append(one > (1L << 53));
            out.append(",\"jdbc_batch_keys\":").append(batch.size());
            createdAt(c, out);
        }

        Configuration cfg = new Configuration()
                .setProperty("hibernate.dialect", "org.hibernate.dialect.PostgreSQLDialect")
                .setProperty("hibernate.connection.driver_class", "org.postgresql.Driver")
                .setProperty("hibernate.connection.url", url)
                .addAnnotatedClass(Invoice.class);
        SessionFactory factory = cfg.buildSessionFactory();
        Set<Long> ids = new HashSet<>();
        Session session = factory.openSession();
        session.beginTransaction();
        for (int i = 0; i < 120; i++) {
            Invoice inv = new Invoice();
            inv.setItem("invoice " + i);
            session.save(inv);
            ids.add(inv.getId());
        }
        session.getTransaction().commit();
        session.close();
        factory.close();
        out.append(",\"hibernate_ids\":").append(ids.size());
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
             ResultSet r = s.executeQuery("SELECT count(*), count(DISTINCT id), min(id), max(id), "
                     + "(SELECT version FROM idgen.segments WHERE biz_type = 'invoice') FROM java_invoices")) {
            r.next();
            out.append(",\"hibernate_rows\":").append(r.getLong(1));
            out.append(",\"hibernate_distinct\":").append(r.getLong(2));
            out.append(",\"hibernate_min\":").append(r.getLong(3));
            out.append(",\"hibernate_max\":").append(r.getLong(4));
            out.append(",\"ranges_taken\":").append(r.getLong(5));
            s.execute("DROP TABLE java_orders, java_invoices");
            s.execute("SELECT idgen.segment_drop('invoice')");
        }
        System.out.println(out.append("}"));
    }
}
