package dev.synchronizers.jmh;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.imageio.ImageIO;

/**
 * Draws the chart of {@code docs/benchmarks.md} from JMH's JSON results: one group of bars per
 * benchmark, one bar per implementation, each bar the implementation's score as a share of the
 * best score in its group (so that scenarios of very different speeds fit one picture), with the
 * score itself written above it. Ours is green, Redisson red, the raw-Redis floor grey, as the
 * legend under the title says.
 *
 * <pre>java -cp jmh/target/benchmarks.jar dev.synchronizers.jmh.BenchChart jmh/results/full.json docs/benchmarks.png</pre>
 *
 * <p>Reads only what it draws (benchmark, {@code impl} parameter, score and unit), with a small
 * pattern-based reader rather than a JSON library: the module depends on nothing else.
 */
public final class BenchChart {

    private static final Pattern ENTRY = Pattern.compile(
            "\"benchmark\"\\s*:\\s*\"([^\"]+)\".*?\"impl\"\\s*:\\s*\"([^\"]+)\".*?\"primaryMetric\"\\s*:\\s*\\{\\s*"
                    + "\"score\"\\s*:\\s*([0-9.eE+-]+).*?\"scoreUnit\"\\s*:\\s*\"([^\"]+)\"",
            Pattern.DOTALL);

    private BenchChart() {
    }

    /**
     * Writes the chart.
     *
     * @param args the JMH JSON file and the PNG to write
     * @throws IOException if either file cannot be read or written
     */
    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            System.err.println("usage: BenchChart <jmh-result.json> <chart.png>");
            System.exit(2);
        }
        Map<String, Map<String, double[]>> groups = read(Files.readString(Path.of(args[0])));
        ImageIO.write(draw(groups), "png", Path.of(args[1]).toFile());
        System.out.println("wrote " + args[1] + " (" + groups.size() + " benchmarks)");
    }

    /** benchmark (short name and unit) to impl to {score}. */
    static Map<String, Map<String, double[]>> read(String json) {
        Map<String, Map<String, double[]>> groups = new LinkedHashMap<>();
        // Split per result object so that a lazy match cannot run from one result into the next.
        for (String result : json.split("\\},\\s*\\{\\s*\"jmhVersion\"")) {
            Matcher m = ENTRY.matcher(result);
            if (m.find()) {
                String benchmark = m.group(1).substring(m.group(1).lastIndexOf('.', m.group(1).lastIndexOf('.') - 1) + 1)
                        + " (" + m.group(4) + ")";
                groups.computeIfAbsent(benchmark, b -> new LinkedHashMap<>())
                        .put(m.group(2), new double[] {Double.parseDouble(m.group(3))});
            }
        }
        return groups;
    }

    private static BufferedImage draw(Map<String, Map<String, double[]>> groups) {
        int barWidth = 34;
        int gap = 46;
        int left = 30;
        int top = 70;
        int plotHeight = 260;
        int width = left * 2;
        for (Map<String, double[]> group : groups.values()) {
            width += group.size() * barWidth + gap;
        }
        width = Math.max(width + 60, 640);
        int height = top + plotHeight + 150;
        BufferedImage image = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, width, height);
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
        g.drawString("synchronizers vs Redisson vs raw-Redis floor: score as a share of the best in each benchmark",
                left, 24);
        legend(g, left, 46);
        int baseline = top + plotHeight;
        g.setStroke(new BasicStroke(1));
        g.drawLine(left, baseline, width - left, baseline);
        int x = left + gap / 2;
        for (Map.Entry<String, Map<String, double[]>> group : groups.entrySet()) {
            boolean lowerIsBetter = group.getKey().contains("/op)");
            double best = group.getValue().values().stream()
                    .mapToDouble(v -> v[0]).reduce(lowerIsBetter ? Math::min : Math::max).orElse(1);
            int groupStart = x;
            for (Map.Entry<String, double[]> bar : group.getValue().entrySet()) {
                double score = bar.getValue()[0];
                double share = lowerIsBetter ? best / score : score / best;
                int barHeight = (int) Math.round(share * plotHeight);
                g.setColor(colour(bar.getKey()));
                g.fillRect(x, baseline - barHeight, barWidth - 6, barHeight);
                g.setColor(Color.DARK_GRAY);
                g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 10));
                g.drawString(compact(score), x, baseline - barHeight - 4);
                drawRotated(g, bar.getKey(), x + 8, baseline + 8);
                x += barWidth;
            }
            g.setColor(Color.BLACK);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 11));
            List<String> words = wrap(group.getKey(), (x - groupStart) / 6);
            for (int i = 0; i < words.size(); i++) {
                g.drawString(words.get(i), groupStart, baseline + 110 + 13 * i);
            }
            x += gap;
        }
        g.dispose();
        return image;
    }

    /** One swatch per colour: ours, Redisson, and the rest (the floor, {@code ReentrantLock}). */
    private static void legend(Graphics2D g, int x, int y) {
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        for (String[] entry : new String[][] {{"SYNCHRONIZERS", "ours (synchronizers)"}, {"REDISSON", "Redisson"},
                {"FLOOR", "raw-Redis floor, ReentrantLock (JUC)"}}) {
            g.setColor(colour(entry[0]));
            g.fillRect(x, y - 10, 12, 12);
            g.setColor(Color.BLACK);
            g.drawString(entry[1], x + 17, y);
            x += 17 + g.getFontMetrics().stringWidth(entry[1]) + 24;
        }
    }

    private static Color colour(String impl) {
        if (impl.startsWith("SYNCHRONIZERS")) {
            return new Color(46, 139, 87);
        }
        if (impl.startsWith("REDISSON")) {
            return new Color(205, 92, 92);
        }
        return new Color(150, 150, 150);
    }

    private static void drawRotated(Graphics2D g, String text, int x, int y) {
        Graphics2D rotated = (Graphics2D) g.create();
        rotated.translate(x, y);
        rotated.rotate(Math.PI / 2);
        rotated.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 10));
        rotated.drawString(text.toLowerCase().replace('_', ' '), 0, 0);
        rotated.dispose();
    }

    private static String compact(double score) {
        return score >= 10_000 ? Math.round(score / 1000) + "k" : score >= 100 ? Long.toString(Math.round(score))
                : String.format("%.1f", score);
    }

    private static List<String> wrap(String text, int columns) {
        List<String> lines = new ArrayList<>();
        StringBuilder line = new StringBuilder();
        for (String word : text.split("(?<=[a-z])(?=[A-Z])| ")) {
            if (line.length() + word.length() > Math.max(columns, 8) && line.length() > 0) {
                lines.add(line.toString());
                line.setLength(0);
            }
            line.append(word);
        }
        lines.add(line.toString());
        return lines;
    }
}
