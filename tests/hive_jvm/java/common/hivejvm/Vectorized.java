/*
 * Test-only helper: Hive's vectorized ACID read. A vectorized MapWork, whose row batch context
 * holds the table's columns and the ROW__ID virtual column, is registered for the job (as
 * Hive's planner does for a vectorized map task); OrcInputFormat.getRecordReader then returns
 * its VectorizedOrcAcidRowBatchReader by itself. Each selected row of each batch is extracted
 * with Hive's VectorExtractRow, ROW__ID from its struct column.
 */
package hivejvm;

import com.fasterxml.jackson.core.JsonGenerator;

import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hive.common.type.DataTypePhysicalVariation;
import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.ql.exec.Utilities;
import org.apache.hadoop.hive.ql.exec.vector.ColumnVector;
import org.apache.hadoop.hive.ql.exec.vector.LongColumnVector;
import org.apache.hadoop.hive.ql.exec.vector.StructColumnVector;
import org.apache.hadoop.hive.ql.exec.vector.VectorExtractRow;
import org.apache.hadoop.hive.ql.exec.vector.VectorizedRowBatch;
import org.apache.hadoop.hive.ql.exec.vector.VectorizedRowBatchCtx;
import org.apache.hadoop.hive.ql.io.orc.OrcInputFormat;
import org.apache.hadoop.hive.ql.metadata.VirtualColumn;
import org.apache.hadoop.hive.ql.plan.MapWork;
import org.apache.hadoop.hive.serde2.objectinspector.ObjectInspector;
import org.apache.hadoop.hive.serde2.typeinfo.TypeInfo;
import org.apache.hadoop.hive.serde2.typeinfo.TypeInfoUtils;
import org.apache.hadoop.io.NullWritable;
import org.apache.hadoop.mapred.InputSplit;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.RecordReader;
import org.apache.hadoop.mapred.Reporter;

final class Vectorized {

  private Vectorized() {
  }

  /** Registers a vectorized MapWork for ``job`` (a plan path of its own); returns that path. */
  static Path register(JobConf job, Values.Schema schema, long id) {
    int n = schema.size();
    String[] names = new String[n + 1];
    TypeInfo[] types = new TypeInfo[n + 1];
    int[] dataColumns = new int[n];
    for (int i = 0; i < n; i++) {
      names[i] = schema.names.get(i);
      types[i] = schema.types.get(i);
      dataColumns[i] = i;
    }
    names[n] = VirtualColumn.ROWID.getName();
    types[n] = VirtualColumn.ROWID.getTypeInfo();
    VectorizedRowBatchCtx ctx = new VectorizedRowBatchCtx(names, types, null, dataColumns, 0, 1,
        new VirtualColumn[] {VirtualColumn.ROWID}, new String[0], new DataTypePhysicalVariation[0]);
    MapWork work = new MapWork();
    work.setVectorMode(true);
    work.setVectorizedRowBatchCtx(ctx);
    Path plan = new Path("file:///tmp/hivejvm-plan-" + ProcessHandle.current().pid() + "-" + id);
    HiveConf.setVar(job, HiveConf.ConfVars.PLAN, plan.toString());
    job.setBoolean(HiveConf.ConfVars.HIVE_VECTORIZATION_ENABLED.varname, true);
    // DECIMAL_64 is a physical variation the batch context above does not declare.
    job.set("hive.vectorized.input.format.supports.enabled", "none");
    Utilities.setMapWork(job, work);
    return plan;
  }

  static void unregister(JobConf job) {
    Utilities.clearWorkMapForConf(job);
  }

  static void readSplit(JsonGenerator g, OrcInputFormat format, InputSplit split, JobConf job,
      Values.Schema schema) throws Exception {
    int n = schema.size();
    TypeInfo[] types = schema.types.toArray(new TypeInfo[0]);
    ObjectInspector[] ois = new ObjectInspector[n];
    for (int i = 0; i < n; i++) {
      ois[i] = TypeInfoUtils.getStandardWritableObjectInspectorFromTypeInfo(types[i]);
    }
    VectorExtractRow extract = new VectorExtractRow();
    extract.init(types);
    @SuppressWarnings({"unchecked", "rawtypes"})
    RecordReader<NullWritable, VectorizedRowBatch> reader =
        (RecordReader) format.getRecordReader(split, job, Reporter.NULL);
    if (!reader.getClass().getSimpleName().equals("VectorizedOrcAcidRowBatchReader")) {
      reader.close();
      throw new IllegalStateException("not Hive's vectorized ACID reader: " + reader.getClass());
    }
    try {
      NullWritable key = reader.createKey();
      VectorizedRowBatch batch = reader.createValue();
      Object[] values = new Object[n];
      while (reader.next(key, batch)) {
        StructColumnVector rowIds = (StructColumnVector) batch.cols[n];
        for (int j = 0; j < batch.size; j++) {
          int row = batch.selectedInUse ? batch.selected[j] : j;
          extract.extractRow(batch, row, values);
          g.writeStartArray();
          Acid.writeRowId(g, field(rowIds, 0, row), field(rowIds, 1, row), field(rowIds, 2, row));
          g.writeStartArray();
          for (int i = 0; i < n; i++) {
            Values.emit(g, values[i], ois[i]);
          }
          g.writeEndArray();
          g.writeEndArray();
        }
      }
    } finally {
      reader.close();
    }
  }

  private static long field(StructColumnVector v, int field, int row) {
    ColumnVector c = v.fields[field];
    int i = c.isRepeating ? 0 : row;
    if (!c.noNulls && c.isNull[i]) {
      throw new IllegalStateException("null ROW__ID field " + field + " at row " + row);
    }
    return ((LongColumnVector) c).vector[i];
  }
}
