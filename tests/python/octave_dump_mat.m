function octave_dump_mat(matfile)
% Print every leaf of the variables in MATFILE, one per line:
%   path <TAB> class <TAB> size <TAB> payload
% numbers as %.17g in column-major order, text as hex bytes.
  s = load(matfile);
  names = sort(fieldnames(s));
  for k = 1:numel(names)
    dump(names{k}, s.(names{k}));
  end
end

function dump(path, v)
  if isstruct(v) && isscalar(v)
    f = fieldnames(v);
    for k = 1:numel(f)
      dump([path '.' f{k}], v.(f{k}));
    end
  elseif iscell(v)
    printf('%s\tcell\t%s\t\n', path, num2str(size(v)));
    for k = 1:numel(v)
      dump(sprintf('%s{%d}', path, k), v{k});
    end
  elseif ischar(v)
    printf('%s\tchar\t%s\t%s\n', path, num2str(size(v)), sprintf('%02x', double(v(:).')));
  else
    printf('%s\t%s\t%s\t%s\n', path, class(v), num2str(size(v)), sprintf('%.17g,', double(v(:))));
  end
end
