// An application written Hibernate's ordinary way, its sequence adopted by pg_idgen
// (docs/adopting.md, "Adopting sequences"): not one line of it mentions pg_idgen.
//   javac -cp <pgjdbc, Hibernate 3.6 and its jars> examples/jdbc/AdoptedHibernate.java
//   java ... AdoptedHibernate 'jdbc:postgresql://127.0.0.1:5432/db?user=postgres' create   # hbm2ddl makes the schema
//   java ... AdoptedHibernate 'jdbc:postgresql://127.0.0.1:5432/db?user=postgres' run      # after idgen.adopt_sequences
// The entity's key: @GeneratedValue(strategy = SEQUENCE) with @SequenceGenerator(allocationSize =
// 50), under Hibernate's sequence-style generator (hibernate.id.new_generator_mappings = true,
// the default from Hibernate 5): its pooled optimizer takes one value v of the sequence
// (INCREMENT 50) and hands out 50 numbers below it itself (Hibernate 3.6: v - 50 .. v - 1). Two SessionFactories (two application
// instances) save 300 entities each, interleaved. Prints one JSON line.
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import javax.persistence.Entity;
import javax.persistence.GeneratedValue;
import javax.persistence.GenerationType;
import javax.persistence.Id;
import javax.persistence.SequenceGenerator;
import javax.persistence.Table;
import org.hibernate.Session;
import org.hibernate.SessionFactory;
import org.hibernate.cfg.Configuration;

public class AdoptedHibernate {
    @Entity
    @Table(name = "shipments")
    public static class Shipment {
        @Id
        @GeneratedValue(strategy = GenerationType.SEQUENCE, generator = "shipment_ids")
        @SequenceGenerator(name = "shipment_ids", sequenceName = "shipment_seq", allocationSize = 50)
        private Long id;
        private String item;

        public Long getId() { return id; }
        public void setId(Long id) { this.id = id; }
        public String getItem() { return item; }
        public void setItem(String item) { this.item = item; }
    }

    static SessionFactory factory(String url, boolean create) {
        Configuration cfg = new Configuration()
                .setProperty("hibernate.dialect", "org.hibernate.dialect.PostgreSQLDialect")
                .setProperty("hibernate.connection.driver_class", "org.postgresql.Driver")
                .setProperty("hibernate.connection.url", url)
                .setProperty("hibernate.id.new_generator_mappings", "true")
                .addAnnotatedClass(Shipment.class);
        if (create) {
            cfg.setProperty("hibernate.hbm2ddl.auto", "create");
        }
        return cfg.buildSessionFactory();
    }

    public static void main(String[] args) throws Exception {
        String url = args[0];
        if (args[1].equals("create")) {
            factory(url, true).close();
            System.out.println("{\"created\":true}");
            return;
        }
        SessionFactory a = factory(url, false), b = factory(url, false);
        Session sa = a.openSession(), sb = b.openSession();
        sa.beginTransaction();
        sb.beginTransaction();
        for (int i = 0; i < 300; i++) {
            for (Session s : new Session[] {sa, sb}) {
                Shipment x = new Shipment();
                x.setItem("shipment " + i);
                s.save(x);
            }
            if (i % 100 == 99) {
                sa.getTransaction().commit();
                sb.getTransaction().commit();
                sa.beginTransaction();
                sb.beginTransaction();
            }
        }
        sa.getTransaction().commit();
        sb.getTransaction().commit();
        sa.close();
        sb.close();
        a.close();
        b.close();
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
             ResultSet r = s.executeQuery("SELECT count(*), count(DISTINCT id), min(id) FROM shipments")) {
            r.next();
            System.out.println("{\"rows\":" + r.getLong(1) + ",\"distinct\":" + r.getLong(2)
                    + ",\"min_above_2_pow_53\":" + (r.getLong(3) > (1L << 53) ? "\"True\"" : "\"False\"") + "}");
        }
    }
}
