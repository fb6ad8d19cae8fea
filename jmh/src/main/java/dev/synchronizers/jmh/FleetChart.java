package dev.synchronizers.jmh;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.Stroke;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import javax.imageio.ImageIO;

/**
 * Draws the fleet chart of {@code docs/benchmarks.md} from the TSV that {@link FleetReport} writes:
 * one row of two panels per kind of synchronizer (non-fair lock, fair lock, read-write lock,
 * semaphore) that the run measured, the left panel throughput against the number of client
 * instances (higher is better), the right one script calls per operation against the same (lower
 * is better), one line per implementation: ours green, Redisson red (a second Redisson variant
 * orange), the raw-Redis floor grey and dashed. The x axis is logarithmic (base 2), and so is the
 * throughput's y axis (throughput falls by an order of magnitude from 2 clients to 64).
 *
 * <pre>java -cp jmh/target/benchmarks.jar dev.synchronizers.jmh.FleetChart jmh/results/fleet.tsv docs/fleet.png</pre>
 */
public final class FleetChart {

    private static final int WIDTH = 1150;
    private static final int MARGIN = 20;
    private static final int PANEL_HEIGHT = 300;
    private static final int HEADER = 70;
    private static final Color OURS = new Color(46, 139, 87);
    private static final Color REDISSON = new Color(205, 55, 55);
    private static final Color REDISSON_OTHER = new Color(230, 145, 30);
    private static final Color FLOOR = new Color(120, 120, 120);
    private static final Stroke SOLID = new BasicStroke(2.5f, BasicStroke.CAP_ROUND, BasicStroke.JOIN_ROUND);
    private static final Stroke DASHED = new BasicStroke(2.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_ROUND, 1,
            new float[] {8, 5}, 0);

    /** The kinds of synchronizer, in the order of the rows. */
    private static final List<String> KINDS = List.of("non-fair lock", "fair lock", "read-write lock", "semaphore");

    private FleetChart() {
    }

    /** One line of a panel: an implementation's values at each number of clients. */
    record Series(String label, Color colour, boolean dashed, TreeMap<Integer, double[]> points) {
    }

    /**
     * Writes the chart.
     *
     * @param args the TSV of {@link FleetReport} and the PNG to write
     * @throws IOException if either file cannot be read or written
     */
    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            System.err.println("usage: FleetChart <fleet.tsv> <chart.png>");
            System.exit(2);
        }
        Map<String, List<Series>> kinds = read(Files.readAllLines(Path.of(args[0])));
        if (kinds.isEmpty()) {
            System.err.println("no fleet rows in " + args[0]);
            System.exit(1);
        }
        ImageIO.write(draw(kinds, Path.of(args[0]).getFileName().toString()), "png", Path.of(args[1]).toFile());
        System.out.println("wrote " + args[1] + " (" + kinds.keySet() + ")");
    }

    /** kind to its series; each point is {ops/s, script calls per operation}. */
    static Map<String, List<Series>> read(List<String> lines) {
        List<String> header = List.of(lines.get(0).split("\t"));
        int benchmark = header.indexOf("benchmark");
        int impl = header.indexOf("impl");
        int clients = header.indexOf("clients");
        int score = header.indexOf("opsPerSec");
        int scriptCalls = header.indexOf("scriptCallsPerOp");
        Map<String, Map<String, Series>> kinds = new TreeMap<>((a, b) -> Integer.compare(KINDS.indexOf(a), KINDS.indexOf(b)));
        for (String line : lines.subList(1, lines.size())) {
            String[] f = line.split("\t");
            if (f.length < header.size()) {
                continue;
            }
            String kind = kind(f[benchmark], f[impl]);
            if (kind == null) {
                continue;
            }
            Series series = kinds.computeIfAbsent(kind, k -> new LinkedHashMap<>())
                    .computeIfAbsent(f[impl], i -> series(f[benchmark], i));
            series.points().put(Integer.parseInt(f[clients]),
                    new double[] {Double.parseDouble(f[score]), Double.parseDouble(f[scriptCalls])});
        }
        Map<String, List<Series>> result = new LinkedHashMap<>();
        kinds.forEach((kind, series) -> {
            List<Series> ordered = new ArrayList<>(series.values());
            ordered.sort((a, b) -> Integer.compare(rank(a), rank(b)));
            result.put(kind, ordered);
        });
        return result;
    }

    private static String kind(String benchmark, String impl) {
        if (benchmark.startsWith("LockContendedBenchmark.")) {
            return impl.endsWith("_FAIR") ? "fair lock" : "non-fair lock";
        }
        if (benchmark.startsWith("ReadWriteLockBenchmark.")) {
            return "read-write lock";
        }
        if (benchmark.startsWith("SemaphoreThroughputBenchmark.")) {
            return "semaphore";
        }
        return null;
    }

    private static Series series(String benchmark, String impl) {
        boolean semaphore = benchmark.startsWith("Semaphore");
        boolean readWrite = benchmark.startsWith("ReadWrite");
        String label;
        Color colour;
        boolean dashed = false;
        switch (impl) {
            case "SYNCHRONIZERS" -> {
                label = semaphore ? "ours: semaphore" : readWrite ? "ours: readWriteLock" : "ours: lock";
                colour = OURS;
            }
            case "SYNCHRONIZERS_FAIR" -> {
                label = "ours: fairLock";
                colour = OURS;
            }
            case "REDISSON" -> {
                label = semaphore ? "Redisson RSemaphore" : readWrite ? "Redisson RReadWriteLock" : "Redisson RLock";
                colour = REDISSON;
            }
            case "REDISSON_FAIR" -> {
                label = "Redisson fair RLock";
                colour = REDISSON;
            }
            case "REDISSON_EXPIRABLE" -> {
                label = "Redisson RPermitExpirableSemaphore";
                colour = REDISSON_OTHER;
            }
            case "FLOOR" -> {
                label = "raw-Redis floor (SET NX, polling)";
                colour = FLOOR;
                dashed = true;
            }
            default -> {
                label = impl.toLowerCase(Locale.ROOT).replace('_', ' ');
                colour = impl.startsWith("SYNCHRONIZERS") ? OURS.darker() : impl.startsWith("REDISSON")
                        ? REDISSON_OTHER : FLOOR;
                dashed = true;
            }
        }
        return new Series(label, colour, dashed, new TreeMap<>());
    }

    /** Ours first, then Redisson's, then the rest. */
    private static int rank(Series series) {
        return series.colour().equals(OURS) ? 0 : series.colour().equals(REDISSON) ? 1
                : series.colour().equals(REDISSON_OTHER) ? 2 : 3;
    }

    static BufferedImage draw(Map<String, List<Series>> kinds, String source) {
        int height = HEADER + kinds.size() * PANEL_HEIGHT + MARGIN;
        BufferedImage image = new BufferedImage(WIDTH, height, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, WIDTH, height);
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 18));
        g.drawString("Fleets: N client instances (one thread each) contending on one name", MARGIN, 28);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        g.setColor(Color.DARK_GRAY);
        g.drawString("x axis: client instances, log scale. Left: throughput of all clients together. Right: Redis "
                + "script calls per operation. From " + source + " (jmh/bench.sh fleet).", MARGIN, 50);
        TreeSet<Integer> clients = new TreeSet<>();
        kinds.values().forEach(list -> list.forEach(s -> clients.addAll(s.points().keySet())));
        int panelWidth = (WIDTH - 3 * MARGIN) / 2;
        int y = HEADER;
        for (Map.Entry<String, List<Series>> kind : kinds.entrySet()) {
            String name = kind.getKey().substring(0, 1).toUpperCase(Locale.ROOT) + kind.getKey().substring(1);
            panel(g, MARGIN, y, panelWidth, name + ": throughput (higher is better)", "operations/s (log scale)",
                    kind.getValue(), 0, clients, true);
            panel(g, 2 * MARGIN + panelWidth, y, panelWidth, name + ": script calls per operation (lower is better)",
                    "script calls / operation", kind.getValue(), 1, clients, false);
            y += PANEL_HEIGHT;
        }
        g.dispose();
        return image;
    }

    private static void panel(Graphics2D g, int x, int y, int width, String title, String yLabel, List<Series> series,
            int value, TreeSet<Integer> clients, boolean logY) {
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 14));
        g.drawString(title, x, y + 16);
        // Legend: one row under the title, wrapping if needed.
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        FontMetrics metrics = g.getFontMetrics();
        int lx = x + 4;
        int ly = y + 36;
        for (Series s : series) {
            int entry = 30 + metrics.stringWidth(s.label()) + 16;
            if (lx + entry > x + width) {
                lx = x + 4;
                ly += 16;
            }
            g.setColor(s.colour());
            g.setStroke(s.dashed() ? DASHED : SOLID);
            g.drawLine(lx, ly - 4, lx + 24, ly - 4);
            marker(g, lx + 12, ly - 4);
            g.setColor(Color.BLACK);
            g.drawString(s.label(), lx + 30, ly);
            lx += entry;
        }
        int plotLeft = x + 62;
        int plotRight = x + width - 12;
        int plotTop = ly + 14;
        int plotBottom = y + PANEL_HEIGHT - 48;
        double max = 0;
        double min = Double.MAX_VALUE;
        for (Series s : series) {
            for (double[] p : s.points().values()) {
                if (!Double.isNaN(p[value]) && p[value] > 0) {
                    max = Math.max(max, p[value]);
                    min = Math.min(min, p[value]);
                }
            }
        }
        YAxis axis;
        List<Double> ticks = new ArrayList<>();
        if (logY) {
            double bottom = Math.pow(10, Math.floor(Math.log10(min == Double.MAX_VALUE ? 1 : min)));
            double top = Math.pow(10, Math.ceil(Math.log10(max > 0 ? max : 10)));
            top = top <= bottom ? bottom * 10 : top;
            axis = new YAxis(true, bottom, top, plotTop, plotBottom);
            for (double decade = bottom; decade < top * 1.01; decade *= 10) {
                for (int m : new int[] {1, 2, 5}) {
                    if (decade * m <= top * 1.01) {
                        ticks.add(decade * m);
                    }
                }
            }
        } else {
            double step = niceStep(max > 0 ? max : 1);
            double top = Math.ceil((max > 0 ? max : 1) / step) * step;
            axis = new YAxis(false, 0, top, plotTop, plotBottom);
            for (double tick = 0; tick <= top + step / 2; tick += step) {
                ticks.add(tick);
            }
        }
        // Grid and y ticks.
        g.setStroke(new BasicStroke(1));
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
        metrics = g.getFontMetrics();
        for (double tick : ticks) {
            int ty = axis.y(tick);
            g.setColor(new Color(228, 228, 228));
            g.drawLine(plotLeft, ty, plotRight, ty);
            g.setColor(Color.DARK_GRAY);
            String text = tickLabel(tick);
            g.drawString(text, plotLeft - 6 - metrics.stringWidth(text), ty + 4);
        }
        // X ticks at every number of clients measured, log2 spaced.
        double lo = log2(clients.first());
        double hi = Math.max(log2(clients.last()), lo + 1);
        for (int c : clients) {
            int tx = xOf(c, lo, hi, plotLeft, plotRight);
            g.setColor(new Color(238, 238, 238));
            g.drawLine(tx, plotTop, tx, plotBottom);
            g.setColor(Color.DARK_GRAY);
            String text = Integer.toString(c);
            g.drawString(text, tx - metrics.stringWidth(text) / 2, plotBottom + 15);
        }
        g.setColor(Color.BLACK);
        g.drawLine(plotLeft, plotBottom, plotRight, plotBottom);
        g.drawLine(plotLeft, plotTop, plotLeft, plotBottom);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        metrics = g.getFontMetrics();
        String xLabel = "client instances (log scale)";
        g.drawString(xLabel, (plotLeft + plotRight - metrics.stringWidth(xLabel)) / 2, plotBottom + 32);
        Graphics2D rotated = (Graphics2D) g.create();
        rotated.translate(x + 12, (plotTop + plotBottom + metrics.stringWidth(yLabel)) / 2);
        rotated.rotate(-Math.PI / 2);
        rotated.drawString(yLabel, 0, 0);
        rotated.dispose();
        // The lines, ours last so that it stays visible where another line covers it.
        List<Series> drawOrder = new ArrayList<>(series);
        Collections.reverse(drawOrder);
        for (Series s : drawOrder) {
            g.setColor(s.colour());
            g.setStroke(s.dashed() ? DASHED : SOLID);
            int px = -1;
            int py = -1;
            for (Map.Entry<Integer, double[]> p : s.points().entrySet()) {
                double v = p.getValue()[value];
                if (Double.isNaN(v) || (logY && v <= 0)) {
                    px = -1;
                    continue;
                }
                int cx = xOf(p.getKey(), lo, hi, plotLeft, plotRight);
                int cy = axis.y(v);
                if (px >= 0) {
                    g.drawLine(px, py, cx, cy);
                }
                marker(g, cx, cy);
                px = cx;
                py = cy;
            }
        }
        g.setStroke(new BasicStroke(1));
    }

    private static void marker(Graphics2D g, int x, int y) {
        g.fillOval(x - 4, y - 4, 8, 8);
    }

    private static int xOf(int clients, double lo, double hi, int left, int right) {
        int inset = 14;
        return (int) Math.round(left + inset + (log2(clients) - lo) / (hi - lo) * (right - left - 2 * inset));
    }

    /** A y axis from {@code bottom} to {@code top}, linear or logarithmic, onto pixels {@code plotBottom} to {@code plotTop}. */
    private record YAxis(boolean log, double bottom, double top, int plotTop, int plotBottom) {
        int y(double v) {
            double share = log ? Math.log(v / bottom) / Math.log(top / bottom) : (v - bottom) / (top - bottom);
            return (int) Math.round(plotBottom - share * (plotBottom - plotTop));
        }
    }

    private static double log2(int n) {
        return Math.log(n) / Math.log(2);
    }

    /** A step of 1, 2 or 5 times a power of ten that cuts {@code max} into 4 to 8 intervals. */
    static double niceStep(double max) {
        double raw = max / 5;
        double power = Math.pow(10, Math.floor(Math.log10(raw)));
        double fraction = raw / power;
        return (fraction < 1.5 ? 1 : fraction < 3.5 ? 2 : fraction < 7.5 ? 5 : 10) * power;
    }

    private static String tickLabel(double tick) {
        if (tick >= 1000) {
            double thousands = tick / 1000;
            return (thousands == Math.rint(thousands) ? Long.toString(Math.round(thousands))
                    : String.format(Locale.ROOT, "%.1f", thousands)) + "k";
        }
        if (tick == Math.rint(tick)) {
            return Long.toString(Math.round(tick));
        }
        return String.format(Locale.ROOT, Math.abs(tick * 10 - Math.rint(tick * 10)) < 1e-9 ? "%.1f" : "%.2f", tick);
    }
}
