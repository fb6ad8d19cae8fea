package dev.synchronizers.testkit;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A loopback TCP proxy that a test puts between a Redis client and a {@code redis-server}, to
 * inject the faults a signal to the server cannot: a command that ran but whose reply was lost,
 * replies that stall while commands flow, a partition of one client only.
 *
 * <pre>{@code
 * try (RedisServer server = RedisServers.start();
 *      FaultProxy proxy = FaultProxy.start(server.port())) {
 *     RedisClient client = RedisClient.create(proxy.uri());
 *     ...
 *     proxy.dropReplies(1, "EVALSHA");   // the next EVALSHA runs; its reply never arrives
 * }}</pre>
 *
 * <p>It listens on {@code 127.0.0.1} on a free port and opens one connection to the target per
 * client connection. Faults apply to every connection, current and new, from the moment the
 * method returns; {@link #pass()} clears them all. Bytes are never reordered within a connection.
 *
 * <p>To drop the replies of chosen commands it reads RESP in both directions: each command the
 * client sends expects one reply, in order, and RESP3 push frames ({@code >}) answer nothing. A
 * connection stops being counted (its commands are never chosen for a drop) once that order is
 * unknown: after {@code MONITOR}, or after a subscribe-family command on a connection not known
 * to speak RESP3 (a successful {@code HELLO 3}), since in RESP2 a Pub/Sub message and a reply
 * look alike. {@code CLIENT REPLY OFF|SKIP} is not understood and must not be used through it.
 *
 * <p>Thread-safe. Every connection is served by one I/O thread; the fault methods hand their
 * change to it and return once it is in effect.
 */
public final class FaultProxy implements AutoCloseable {

    private static final String LOOPBACK = "127.0.0.1";
    private static final Set<String> SUBSCRIBE_FAMILY = Set.of("SUBSCRIBE", "UNSUBSCRIBE", "PSUBSCRIBE",
            "PUNSUBSCRIBE", "SSUBSCRIBE", "SUNSUBSCRIBE");

    private final int targetPort;
    private final EventLoopGroup group;
    /** The one I/O thread: every field below, and every link's state, is confined to it. */
    private final EventLoop loop;
    private final Channel listener;
    private final Set<Link> links = new HashSet<>();
    private final AtomicInteger dropped = new AtomicInteger();
    private final AtomicInteger received = new AtomicInteger();
    private long delayNanos;
    private boolean holding;
    private boolean blackhole;
    private int dropsLeft;
    private Set<String> dropOnly = Set.of();
    private boolean closed;

    // NioEventLoopGroup: Netty 4.2 deprecates it for MultiThreadIoEventLoopGroup, which Netty 4.1
    // (the Netty of Lettuce 6.x, which the Redis module is also tested on) does not have.
    @SuppressWarnings("deprecation")
    private FaultProxy(int targetPort) {
        this.targetPort = targetPort;
        this.group = new NioEventLoopGroup(1, new DefaultThreadFactory("fault-proxy", true));
        this.loop = group.next();
        try {
            this.listener = new ServerBootstrap()
                    .group(group)
                    .channel(NioServerSocketChannel.class)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel channel) {
                            channel.pipeline().addLast(new Link(channel).clientSide);
                        }
                    })
                    .bind(LOOPBACK, 0).syncUninterruptibly().channel();
        } catch (RuntimeException e) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            throw e;
        }
    }

    /**
     * Starts a proxy to {@code 127.0.0.1:targetPort}, passing everything through.
     *
     * @param targetPort the port of the server to forward to, on loopback
     * @return the running proxy, which the caller must close
     * @throws IllegalArgumentException if the port is out of range
     */
    public static FaultProxy start(int targetPort) {
        if (targetPort < 1 || targetPort > 65535) {
            throw new IllegalArgumentException("targetPort out of range: " + targetPort);
        }
        return new FaultProxy(targetPort);
    }

    /**
     * Returns the port the proxy listens on, on {@code 127.0.0.1}.
     *
     * @return the port
     */
    public int port() {
        return ((InetSocketAddress) listener.localAddress()).getPort();
    }

    /**
     * Returns the URI a client connects to, {@code redis://127.0.0.1:<port>}.
     *
     * @return the URI
     */
    public String uri() {
        return "redis://" + LOOPBACK + ":" + port();
    }

    /**
     * Clears every fault: no delay, no held replies (those held are delivered now, in order), no
     * blackhole (connections accepted during it are connected now), no further commands chosen
     * for a drop. A command already chosen still has its reply dropped.
     */
    public void pass() {
        onLoop(() -> {
            delayNanos = 0;
            holding = false;
            dropsLeft = 0;
            dropOnly = Set.of();
            blackhole = false;
            resume();
            return null;
        });
    }

    /**
     * Delays every packet that arrives from now on, in both directions, by {@code perPacket}
     * (order is kept: a packet never overtakes an earlier one of its direction).
     *
     * @param perPacket the delay, zero for none
     * @throws IllegalArgumentException if it is negative
     */
    public void delay(Duration perPacket) {
        if (perPacket.isNegative()) {
            throw new IllegalArgumentException("negative delay: " + perPacket);
        }
        onLoop(() -> {
            delayNanos = perPacket.toNanos();
            return null;
        });
    }

    /**
     * Stalls the server-to-client direction of every connection: replies and Pub/Sub messages
     * are kept, none is delivered until {@link #pass()}. Commands still reach the server and run.
     * A client that closes its connection meanwhile never gets what was kept for it.
     */
    public void holdReplies() {
        onLoop(() -> {
            holding = true;
            return null;
        });
    }

    /**
     * Forwards the next {@code commands} commands (counting only those named in
     * {@code commandNames}, case-insensitive, if any are) and discards exactly their replies: the
     * commands run, their clients never hear of it, and the replies to other commands arrive
     * as usual. Counts over all connections whose reply order is known (see the class comment).
     * Replaces an earlier {@code dropReplies} that has not chosen all its commands yet.
     *
     * <p>A client that pairs replies with commands by order, as Lettuce does, then gives each
     * later reply on that connection to the command before it: a command that timed out stays
     * first in line and takes the next reply. Over TCP a reply is lost only with its connection,
     * so to model that, wait until {@link #droppedReplies()} counts the drop and {@link #cutAll()};
     * to model a late reply instead, use {@link #holdReplies()} and {@link #pass()}.
     *
     * @param commands how many commands to choose
     * @param commandNames the command names that may be chosen, e.g. {@code "EVALSHA", "EVAL"};
     *     none for any command
     * @throws IllegalArgumentException if {@code commands} is negative
     */
    public void dropReplies(int commands, String... commandNames) {
        if (commands < 0) {
            throw new IllegalArgumentException("negative count: " + commands);
        }
        Set<String> names = new HashSet<>();
        for (String name : commandNames) {
            names.add(name.toUpperCase(Locale.ROOT));
        }
        onLoop(() -> {
            dropsLeft = commands;
            dropOnly = Set.copyOf(names);
            return null;
        });
    }

    /**
     * Returns how many replies this proxy has discarded so far, for {@link #dropReplies}.
     *
     * @return the number of discarded replies
     */
    public int droppedReplies() {
        return dropped.get();
    }

    /**
     * Returns how many commands this proxy has received from clients so far, over all connections,
     * whether or not it forwarded them yet (a blackhole or a delay keeps them): a test can tell that
     * a command it cannot see in Redis yet has left the client.
     *
     * @return the number of commands received
     */
    public int commandsReceived() {
        return received.get();
    }

    /**
     * Closes every current connection, both the client's and the server's side, at once; what
     * was delayed or held for them is lost. New connections are served as usual.
     */
    public void cutAll() {
        onLoop(() -> {
            for (Link link : List.copyOf(links)) {
                link.cut();
            }
            return null;
        });
    }

    /**
     * Turns the blackhole on or off. While on, new connections are accepted but never connected
     * to the server, and current ones stall in both directions: nothing is forwarded or
     * answered, as in a network partition, so clients see connects and commands time out. Bytes
     * are kept, as TCP would retransmit them, and are delivered when it is turned off (or by
     * {@link #pass()}); a test that wants them lost cuts the connections with {@link #cutAll()}.
     *
     * @param on whether to blackhole
     */
    public void blackhole(boolean on) {
        onLoop(() -> {
            blackhole = on;
            if (!on) {
                resume();
            }
            return null;
        });
    }

    /**
     * Returns how many client connections are open now, blackholed ones included.
     *
     * @return the number of open client connections
     */
    public int connections() {
        return onLoop(links::size);
    }

    /** Closes every connection and stops listening. Idempotent. */
    @Override
    public void close() {
        if (group.isShuttingDown()) {
            return;
        }
        onLoop(() -> {
            closed = true;
            listener.close();
            for (Link link : List.copyOf(links)) {
                link.cut();
            }
            return null;
        });
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }

    /** Returns the port, the target and the faults in effect. */
    @Override
    public String toString() {
        return onLoop(() -> "FaultProxy[" + LOOPBACK + ":" + port() + " -> " + LOOPBACK + ":" + targetPort
                + ", " + links.size() + " connections" + (holding ? ", holding replies" : "")
                + (blackhole ? ", blackhole" : "") + (delayNanos > 0 ? ", delay " + delayNanos / 1000 + " us" : "")
                + (dropsLeft > 0 ? ", dropping " + dropsLeft + " replies " + dropOnly : "")
                + ", dropped " + dropped.get() + "]");
    }

    private void resume() {
        for (Link link : links) {
            link.resume();
        }
    }

    private <T> T onLoop(Callable<T> task) {
        try {
            return loop.submit(task).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the proxy's I/O thread", e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("the proxy's I/O thread failed", e.getCause());
        }
    }

    /** What a command's reply does when it arrives: pass or be dropped, and what it tells about the protocol. */
    private enum Kind { PLAIN, HELLO, RESET, UNORDERED }

    private record Expected(Kind kind, boolean drop) {
    }

    /** One client connection and its connection to the server. */
    private final class Link {
        final Channel client;
        Channel server;   // null until connected
        final Outbox toServer = new Outbox(false);
        final Outbox toClient = new Outbox(true);
        final Framer commands = new Framer();
        final Framer replies = new Framer();
        final ArrayDeque<Expected> expected = new ArrayDeque<>();
        /** Whether each reply is known to answer the oldest command still waiting. */
        boolean ordered = true;
        /** Set when a command makes the order unknown, before its reply ends counting. */
        boolean counting = true;
        boolean resp3;
        boolean connecting;
        boolean cut;

        final ChannelInboundHandlerAdapter clientSide = new ChannelInboundHandlerAdapter() {
            @Override
            public void channelActive(ChannelHandlerContext ctx) {
                if (closed) {
                    ctx.close();
                    return;
                }
                links.add(Link.this);
                toClient.out = client;
                if (!blackhole) {
                    connect();
                }
            }

            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                fromClient((ByteBuf) msg);
            }

            @Override
            public void channelInactive(ChannelHandlerContext ctx) {
                links.remove(Link.this);
                toClient.discard();
                toServer.closeWhenDrained();
            }

            @Override
            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                cut();
            }
        };

        final ChannelInboundHandlerAdapter serverSide = new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                fromServer((ByteBuf) msg);
            }

            @Override
            public void channelInactive(ChannelHandlerContext ctx) {
                toServer.discard();
                toClient.closeWhenDrained();
            }

            @Override
            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                cut();
            }
        };

        Link(Channel client) {
            this.client = client;
        }

        void connect() {
            connecting = true;
            new Bootstrap()
                    .group(loop)
                    .channel(NioSocketChannel.class)
                    .option(ChannelOption.TCP_NODELAY, true)
                    .handler(serverSide)
                    .connect(LOOPBACK, targetPort)
                    .addListener((ChannelFutureListener) future -> {
                        if (!future.isSuccess() || cut || !client.isActive()) {
                            future.channel().close();
                            client.close();
                            return;
                        }
                        server = future.channel();
                        toServer.out = server;
                        toServer.drain();
                    });
        }

        /** Connects a link accepted during a blackhole, and writes what was stalled. */
        void resume() {
            if (!connecting && !cut && !blackhole) {
                connect();
            }
            toServer.drain();
            toClient.drain();
        }

        void cut() {
            cut = true;
            links.remove(this);
            toServer.discard();
            toClient.discard();
            client.close();
            if (server != null) {
                server.close();
            }
        }

        void fromClient(ByteBuf chunk) {
            for (ByteBuf command : commands.frames(chunk)) {
                String name = RespFrames.commandName(command, command.readerIndex(), command.writerIndex());
                if (name != null) {
                    received.incrementAndGet();
                    expect(name);
                }
                toServer.add(command);
            }
        }

        private void expect(String name) {
            if (!counting) {
                return;
            }
            boolean helloPending = expected.stream().anyMatch(e -> e.kind == Kind.HELLO);
            if (name.equals("MONITOR") || SUBSCRIBE_FAMILY.contains(name) && (!resp3 || helloPending)) {
                counting = false;
                expected.add(new Expected(Kind.UNORDERED, false));
                return;
            }
            if (SUBSCRIBE_FAMILY.contains(name)) {
                return;   // RESP3: confirmed by push frames, not by a reply
            }
            boolean drop = dropsLeft > 0 && (dropOnly.isEmpty() || dropOnly.contains(name));
            if (drop) {
                dropsLeft--;
            }
            Kind kind = name.equals("HELLO") ? Kind.HELLO : name.equals("RESET") ? Kind.RESET : Kind.PLAIN;
            expected.add(new Expected(kind, drop));
        }

        void fromServer(ByteBuf chunk) {
            for (ByteBuf reply : replies.frames(chunk)) {
                byte type = reply.getByte(reply.readerIndex());
                Expected answered = !ordered || type == RespFrames.PUSH ? null : expected.poll();
                if (answered != null) {
                    switch (answered.kind) {
                        case HELLO -> resp3 = type == RespFrames.MAP || resp3 && type == '-';
                        case RESET -> resp3 = false;
                        case UNORDERED -> {
                            ordered = false;
                            expected.clear();
                        }
                        default -> { }
                    }
                    if (answered.drop) {
                        reply.release();
                        dropped.incrementAndGet();
                        continue;
                    }
                }
                toClient.add(reply);
            }
        }

        /** One direction's bytes on their way out: delayed, stalled, then written in order. */
        private final class Outbox {
            final boolean towardsClient;
            final ArrayDeque<ByteBuf> pending = new ArrayDeque<>();
            final ArrayDeque<Long> due = new ArrayDeque<>();
            Channel out;   // null until connected
            boolean scheduled;
            boolean closing;

            Outbox(boolean towardsClient) {
                this.towardsClient = towardsClient;
            }

            void add(ByteBuf bytes) {
                pending.add(bytes);
                due.add(System.nanoTime() + delayNanos);
                drain();
            }

            boolean stalled() {
                return out == null || blackhole || towardsClient && holding;
            }

            void drain() {
                if (stalled()) {
                    return;
                }
                boolean wrote = false;
                long now = System.nanoTime();
                while (!pending.isEmpty() && due.peek() - now <= 0) {
                    due.poll();
                    out.write(pending.poll());
                    wrote = true;
                }
                if (wrote) {
                    out.flush();
                }
                if (!pending.isEmpty()) {
                    if (!scheduled) {
                        scheduled = true;
                        loop.schedule(() -> {
                            scheduled = false;
                            drain();
                        }, due.peek() - now, TimeUnit.NANOSECONDS);
                    }
                } else if (closing) {
                    out.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
                }
            }

            /** Closes the channel once what is pending for it is written (the other side has closed). */
            void closeWhenDrained() {
                closing = true;
                if (out == null) {
                    discard();
                } else {
                    drain();
                }
            }

            void discard() {
                pending.forEach(ByteBuf::release);
                pending.clear();
                due.clear();
                if (out != null) {
                    out.close();
                }
            }
        }
    }

    /** Cuts one direction's stream into whole RESP frames, keeping an incomplete tail for later. */
    private static final class Framer {
        private final ByteBuf tail = Unpooled.buffer();

        /** Appends {@code chunk} (released) and returns the whole frames now available, as copies. */
        List<ByteBuf> frames(ByteBuf chunk) {
            try {
                tail.writeBytes(chunk);
            } finally {
                chunk.release();
            }
            List<ByteBuf> frames = new ArrayList<>();
            int end;
            while ((end = RespFrames.end(tail, tail.readerIndex())) >= 0) {
                frames.add(tail.readBytes(end - tail.readerIndex()));
            }
            tail.discardReadBytes();
            return frames;
        }
    }
}
